"""What tokenctl's test services share: serving on 127.0.0.1 until the test that started
them is gone, and asking the authorization server whether a token is active.

A service publishes {"base_url", "port", "pid"} in a JSON file once it listens (written to
a temporary name and renamed, so a reader never sees half of it), and removes the file
when it stops: on SIGTERM, SIGINT or SIGHUP, when the watched process exits, or when its
lifetime is over, so that no test can leave a server behind.
"""

import base64
import json
import os
import signal
import threading
import time
import urllib.error
import urllib.parse
import urllib.request


def serve(server, info_path, watch_pid, lifetime, scheme="http", extra=None):
    """Publishes `server`'s address in `info_path` and serves until told or left to stop.

    `extra` (a dict) is merged into the published JSON after the address keys, for a
    service that has more to tell its tests (a CA file, ids); it cannot replace them.
    """
    port = server.server_address[1]

    def stop(*_):
        try:
            os.unlink(info_path)
        except OSError:
            pass
        os._exit(0)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)

    def watch():
        deadline = time.monotonic() + lifetime
        while time.monotonic() < deadline:
            if watch_pid:
                try:
                    os.kill(watch_pid, 0)
                except ProcessLookupError:
                    break
            time.sleep(0.5)
        stop()

    threading.Thread(target=watch, daemon=True).start()
    temporary = info_path + ".tmp"
    info = dict(extra or {})
    info.update({"base_url": "%s://127.0.0.1:%d" % (scheme, port), "port": port, "pid": os.getpid()})
    with open(temporary, "w") as handle:
        json.dump(info, handle)
    os.replace(temporary, info_path)
    server.serve_forever()


def introspect(url, client, token):
    """The RFC 7662 answer for `token`: (HTTP status, the JSON object or None).

    `client` is "ID:SECRET", sent as HTTP Basic with both parts form-encoded first (RFC
    7662 §2.1 with RFC 6749 §2.3.1). Status 0 means the endpoint could not be reached.
    """
    client_id, _, secret = client.partition(":")
    basic = base64.b64encode(("%s:%s" % (urllib.parse.quote(client_id, safe=""),
                                         urllib.parse.quote(secret, safe=""))).encode()).decode()
    request = urllib.request.Request(
        url, method="POST",
        data=urllib.parse.urlencode({"token": token, "token_type_hint": "access_token"}).encode(),
        headers={"Authorization": "Basic " + basic, "Accept": "application/json",
                 "Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, answer = response.status, json.load(response)
    except urllib.error.HTTPError as error:
        status, answer = error.code, None
    except (OSError, ValueError):
        status, answer = 0, None
    return status, answer if isinstance(answer, dict) else None
