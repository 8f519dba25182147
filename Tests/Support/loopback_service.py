"""What tokenctl's test services share: serving on 127.0.0.1 until the test that started
them is gone, and asking the authorization server whether a token is active.

A service publishes {"base_url", "port", "pid"} in a JSON file once it listens (written to
a temporary name and renamed, so a reader never sees half of it), and removes the file
when it stops: on SIGTERM, SIGINT or SIGHUP, when the watched process exits, or when its
lifetime is over, so that no test can leave a server behind.

The stand-ins that guard a resource with the authorization server (the git, hg, cargo,
docker, kube and Python index servers) also share here how they are started
(`arguments`: --state-dir DIR, --introspect URL, --introspect-client ID:SECRET,
--watch-pid PID, default the parent, and --lifetime SECONDS, default 300), how they read
the Authorization header (`credential`), how they ask whether a token is active, on every
request and never cached (`is_active`), and how they log each request as one JSON line in
DIR/requests.log, with the first 16 hex digits of the token's SHA-256 and never the token,
so a test can tell which token was sent (`record`).
"""

import argparse
import base64
import hashlib
import json
import os
import signal
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# One log line at a time: the servers answer on several threads.
_LOG_LOCK = threading.Lock()


def arguments(introspecting=True, more=None):
    """The stand-ins' command line, parsed: --state-dir, --watch-pid (default: the parent),
    --lifetime (default 300 s) and, when `introspecting`, --introspect URL and
    --introspect-client ID:SECRET. `more(parser)` adds a stand-in's own options.
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--state-dir", required=True)
    if introspecting:
        parser.add_argument("--introspect", required=True, metavar="URL")
        parser.add_argument("--introspect-client", required=True, metavar="ID:SECRET")
    if more:
        more(parser)
    parser.add_argument("--watch-pid", type=int, default=os.getppid())
    parser.add_argument("--lifetime", type=float, default=300)
    args = parser.parse_args()
    if introspecting and ":" not in args.introspect_client:
        # Never echo the value: it holds the client secret.
        parser.error("--introspect-client takes ID:SECRET")
    return args


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # set before listen(): parallel test processes connect at once


def self_signed_certificate(state_dir):
    """(key path, certificate path) of a new one-day certificate for 127.0.0.1 in `state_dir`."""
    key, certificate = os.path.join(state_dir, "key.pem"), os.path.join(state_dir, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate],
                   check=True, capture_output=True)
    return key, certificate


def credential(header, accept=("bearer", "basic")):
    """(kind, username, token) from an Authorization header: kind is "none", "bearer",
    "basic" (token is the password, "" when it does not decode) or "other", which is also
    what a scheme the server does not `accept` counts as."""
    scheme, _, value = header.partition(" ")
    kind = scheme.lower() if scheme.lower() in accept and value.strip() else "other"
    if not header:
        return "none", None, ""
    if kind == "bearer":
        return "bearer", None, value.strip()
    if kind == "basic":
        try:
            user, _, password = base64.b64decode(value.strip(), validate=True).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return "basic", None, ""
        return "basic", user, password
    return "other", None, ""


def is_active(args, token):
    """Whether the authorization server (args.introspect) says `token` is active, and its
    answer (None when there is no token or no answer). Asked every time, never cached."""
    if not token:
        return False, None
    _, answer = introspect(args.introspect, args.introspect_client, token)
    return bool(answer) and answer.get("active") is True, answer


def token_digest(token):
    """What a request log holds of a token: the first 16 hex digits of its SHA-256, never the token."""
    return hashlib.sha256(token.encode()).hexdigest()[:16] if token else None


def record(state_dir, line, status):
    """Appends `line` with its status to state_dir/requests.log. A server logs a request before
    it answers, so that a test that reads the log once its client is done finds all of it."""
    with _LOG_LOCK:
        with open(os.path.join(state_dir, "requests.log"), "a") as log:
            log.write(json.dumps(dict(line, status=status)) + "\n")


class Handler(BaseHTTPRequestHandler):
    """A quiet HTTP/1.1 handler whose server has `args`, with `send` that logs first."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, headers=(), line=None):
        if line is not None:
            record(self.server.args.state_dir, line, status)
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def run(handler, args, info_name, tls=False, **attributes):
    """Serves `handler` on a new `Server` until told or left to stop (`serve`), publishing
    its address in args.state_dir/info_name. The server has `args`, its `base_url` and
    `attributes` for the handler to read. With `tls` it answers HTTPS only, with a new
    self-signed certificate for 127.0.0.1, published as "certificate".
    """
    server = Server(("127.0.0.1", 0), handler)
    server.args = args
    scheme, extra = "http", None
    if tls:
        key, certificate = self_signed_certificate(args.state_dir)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme, extra = "https", {"certificate": certificate}
    server.base_url = "%s://127.0.0.1:%d" % (scheme, server.server_address[1])
    for name, value in attributes.items():
        setattr(server, name, value)
    serve(server, os.path.join(args.state_dir, info_name), args.watch_pid, args.lifetime, scheme=scheme, extra=extra)


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
