"""Starts and stops the test authorization server. Run through Tests/Support/auth-server.sh:

    auth-server.sh start STATE_DIR [--watch-pid PID] [--lifetime SECONDS]
    auth-server.sh stop STATE_DIR

`start` runs the server in the background on 127.0.0.1 (a free port), waits until it
answers, writes STATE_DIR/server.json and returns 0. The server stops by itself when the
watched process (by default the one that ran `start`) is gone, or after its lifetime
(default 20 minutes). It logs to STATE_DIR/server.log: request lines (paths without
query strings) and warnings, never tokens.
"""
import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# No __pycache__ in the source tree (our modules are tiny; the venv's are precompiled).
sys.dont_write_bytecode = True
# What it shares with glewlwyd-server.py lives beside the other test servers.
sys.path.insert(0, os.path.join(HERE, "..", "Support"))
import supervised_server  # noqa: E402

CACHE_DIR = os.path.join(REPO, ".build-python", "auth-server")
DEFAULT_LIFETIME = 20 * 60
START_TIMEOUT = 90  # the first start ever also runs the migrations
SERVER = supervised_server.Server(
    "auth-server.sh", __file__, "AUTH_SERVER_WATCH_PID", start_seconds=START_TIMEOUT, stop_seconds=5)


# --- start -----------------------------------------------------------------------------


def cmd_start(args):
    info, abort = SERVER.start(args, timeout_tail=False)
    state_dir = os.path.abspath(args.state_dir)

    # Belt and braces: it answers, and what it answers matches server.json.
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
            info["endpoints"]["discovery"], timeout=10
        ) as response:
            discovery = json.load(response)
    except (OSError, ValueError) as error:
        abort(f"the server does not answer ({type(error).__name__}: {error}); see {state_dir}/server.log")
    if discovery.get("issuer") != info["issuer"]:
        abort(f"discovery says issuer {discovery.get('issuer')!r}, expected {info['issuer']!r}")
    return 0


# --- the server process ----------------------------------------------------------------


def template_key():
    """Changes whenever the migrations could: pinned packages, this project, Python."""
    digest = hashlib.sha256(sys.version.encode())
    with open(os.path.join(HERE, "requirements.txt"), "rb") as f:
        digest.update(f.read())
    for top in ("authserver", "idp"):
        for root, dirs, files in sorted(os.walk(os.path.join(HERE, top))):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(root, name)
                    digest.update(os.path.relpath(path, HERE).encode())
                    with open(path, "rb") as f:
                        digest.update(f.read())
    return digest.hexdigest()[:16]


def sqlite_copy(source, destination):
    """A consistent copy of a sqlite database (WAL included), written atomically."""
    tmp = f"{destination}.{os.getpid()}.tmp"
    src, dst = sqlite3.connect(source), sqlite3.connect(tmp)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    os.replace(tmp, destination)


def prepare_database(db):
    """A fresh, migrated database at `db`; migrates once into a cached template."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(db + suffix)
        except FileNotFoundError:
            pass
    template = os.path.join(CACHE_DIR, f"template-{template_key()}.sqlite3")
    if os.path.exists(template):
        shutil.copyfile(template, db)
        return
    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", interactive=False, verbosity=0)
    connections.close_all()
    os.makedirs(CACHE_DIR, exist_ok=True)
    sqlite_copy(db, template)
    for name in os.listdir(CACHE_DIR):  # templates of earlier versions of this project
        if name.startswith("template-") and os.path.join(CACHE_DIR, name) != template:
            try:
                os.unlink(os.path.join(CACHE_DIR, name))
            except OSError:
                pass


def serve(args):
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

    state_dir = os.path.abspath(args.state_dir)
    started = time.monotonic()

    class Handler(WSGIRequestHandler):
        timeout = 60  # a stuck client must not hold a thread forever

        def address_string(self):
            return self.client_address[0]

        def log_request(self, code="-", size="-"):
            # Paths only: query strings may carry codes or tokens.
            parts = self.requestline.split()
            path = parts[1].split("?", 1)[0] if len(parts) > 1 else "-"
            self.log_message("%s %s %s", parts[0] if parts else "-", path, code)

        def log_error(self, format, *args):
            # BaseHTTPRequestHandler puts the raw request line into some error messages.
            message = format % args
            self.log_message("%s", re.sub(r"\?\S*", "?...", message))

        def log_message(self, format, *args):
            sys.stderr.write(f"{time.strftime('%H:%M:%S')} {format % args}\n")

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True
        block_on_close = False  # stopping must not wait for clients
        request_queue_size = 64

        def server_bind(self):
            # WSGIServer.server_bind would do a reverse DNS lookup for SERVER_NAME.
            import http.server

            http.server.HTTPServer.server_bind(self)
            self.server_name, self.server_port = "127.0.0.1", self.server_address[1]
            self.setup_environ()

    httpd = Server(("127.0.0.1", args.port), Handler)  # never 0.0.0.0
    port = httpd.server_address[1]
    db = os.path.join(state_dir, "db.sqlite3")
    os.environ.update(
        AUTH_SERVER_STATE_DIR=state_dir,
        AUTH_SERVER_PORT=str(port),
        AUTH_SERVER_DB=db,
        DJANGO_SETTINGS_MODULE="authserver.settings",
    )
    sys.path.insert(0, HERE)
    import django

    django.setup()
    prepare_database(db)
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application

    fixtures_path = os.path.join(state_dir, "fixtures.json")
    call_command("authserver_fixtures", output=fixtures_path)
    with open(fixtures_path, encoding="utf-8") as f:
        fixtures = json.load(f)
    os.unlink(fixtures_path)
    httpd.set_app(get_wsgi_application())

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop.set())
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()

    base = f"http://127.0.0.1:{port}"
    issuer = f"{base}/o"
    info = {
        "issuer": issuer,
        "base_url": base,
        "port": port,
        "pid": os.getpid(),
        "endpoints": {
            "authorization": f"{issuer}/authorize/",
            "token": f"{issuer}/token/",
            "device_authorization": f"{issuer}/device-authorization/",
            "device_verification": f"{issuer}/device/",
            "revocation": f"{issuer}/revoke_token/",
            "introspection": f"{issuer}/introspect/",
            "userinfo": f"{issuer}/userinfo/",
            "jwks": f"{issuer}/.well-known/jwks.json",
            "discovery": f"{issuer}/.well-known/openid-configuration",
            "server_metadata": f"{base}/.well-known/oauth-authorization-server/o",
            "login": f"{base}/accounts/login/",
        },
        **fixtures,
        "state_dir": state_dir,
        "log": os.path.join(state_dir, "server.log"),
    }
    published = supervised_server.Published(state_dir, info, args)
    print(
        f"{time.strftime('%H:%M:%S')} serving {base} (pid {os.getpid()}, watching "
        f"{published.watch_pid or 'nothing'}, lifetime {args.lifetime} s, started in "
        f"{time.monotonic() - started:.2f} s)",
        file=sys.stderr,
    )

    reason = None
    while reason is None:
        reason = "signal" if stop.wait(0.25) else published.end_reason()
    print(f"{time.strftime('%H:%M:%S')} stopping: {reason}", file=sys.stderr)
    httpd.shutdown()
    httpd.server_close()
    published.withdraw()
    sys.stderr.flush()
    os._exit(0)  # no slow interpreter teardown: request threads are daemons anyway


def main():
    return SERVER.main(__doc__.split("\n\n")[0], DEFAULT_LIFETIME, cmd_start, serve,
                       serve_options=[("--port", {"type": int, "default": 0})])


if __name__ == "__main__":
    sys.exit(main())
