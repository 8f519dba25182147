"""Starts and stops the test authorization server. Run through Tests/Support/auth-server.sh:

    auth-server.sh start STATE_DIR [--watch-pid PID] [--lifetime SECONDS]
    auth-server.sh stop STATE_DIR

`start` runs the server in the background on 127.0.0.1 (a free port), waits until it
answers, writes STATE_DIR/server.json and returns 0. The server stops by itself when the
watched process (by default the one that ran `start`) is gone, or after its lifetime
(default 20 minutes). It logs to STATE_DIR/server.log: request lines (paths without
query strings) and warnings, never tokens.
"""
import argparse
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
CACHE_DIR = os.path.join(REPO, ".build-python", "auth-server")
DEFAULT_LIFETIME = 20 * 60
START_TIMEOUT = 90  # the first start ever also runs the migrations


def fail(message):
    print(f"auth-server.sh: {message}", file=sys.stderr)
    sys.exit(1)


# --- processes -------------------------------------------------------------------------


def proc_start_time(pid):
    """The process's start time (clock ticks after boot), or None if it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] in ("Z", "X"):
        return None
    return fields[19]


def is_our_server(pid, state_dir):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return False
    return b"_serve" in argv and os.fsencode(state_dir) in argv and proc_start_time(pid) is not None


def recorded_pid(state_dir):
    for name, read in (("server.pid", lambda t: t), ("server.json", lambda t: json.loads(t)["pid"])):
        try:
            with open(os.path.join(state_dir, name), encoding="utf-8") as f:
                return int(read(f.read().strip()))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None


def write_atomically(path, text, mode=0o600):
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


# --- start / stop ----------------------------------------------------------------------


def cmd_start(args):
    state_dir = os.path.abspath(args.state_dir)
    os.makedirs(state_dir, exist_ok=True)
    old = recorded_pid(state_dir)
    if old and is_our_server(old, state_dir):
        fail(f"a server is already running for {state_dir} (pid {old}); stop it first")
    for name in ("server.json", "server.pid"):
        try:
            os.unlink(os.path.join(state_dir, name))
        except FileNotFoundError:
            pass

    watch_pid = args.watch_pid
    if watch_pid is None:
        watch_pid = int(os.environ.get("AUTH_SERVER_WATCH_PID") or os.getppid())
    if watch_pid > 1 and proc_start_time(watch_pid) is None:
        fail(f"there is no process {watch_pid} to watch")
    log = open(os.path.join(state_dir, "server.log"), "ab")
    child = subprocess_popen(
        [sys.executable, "-u", os.path.abspath(__file__), "_serve", state_dir,
         "--watch-pid", str(watch_pid), "--lifetime", str(args.lifetime)],
        log,
    )
    write_atomically(os.path.join(state_dir, "server.pid"), f"{child.pid}\n")

    def abort(message):
        if child.poll() is None:
            child.kill()
            child.wait()
        for name in ("server.json", "server.pid"):
            try:
                os.unlink(os.path.join(state_dir, name))
            except FileNotFoundError:
                pass
        fail(message)

    deadline = time.monotonic() + START_TIMEOUT
    server_json = os.path.join(state_dir, "server.json")
    while True:
        if child.poll() is not None:
            abort(f"the server exited with status {child.returncode}; see {state_dir}/server.log:\n"
                  + tail(os.path.join(state_dir, "server.log")))
        if os.path.exists(server_json):
            with open(server_json, encoding="utf-8") as f:
                info = json.load(f)
            if info.get("pid") == child.pid:
                break
        if time.monotonic() > deadline:
            abort(f"the server did not start within {START_TIMEOUT} s; see {state_dir}/server.log")
        time.sleep(0.05)

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


def subprocess_popen(argv, log):
    import subprocess

    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        close_fds=True,
        start_new_session=True,  # not killed along with the caller's process group...
        cwd="/",
    )  # ...but it watches the caller and stops when it is gone (see serve()).


def tail(path, lines=30):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def cmd_stop(args):
    state_dir = os.path.abspath(args.state_dir)
    pid = recorded_pid(state_dir)
    if pid and is_our_server(pid, state_dir):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 5
        while is_our_server(pid, state_dir) and time.monotonic() < deadline:
            time.sleep(0.05)
        if is_our_server(pid, state_dir):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for name in ("server.json", "server.pid"):
        try:
            os.unlink(os.path.join(state_dir, name))
        except FileNotFoundError:
            pass
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
    write_atomically(os.path.join(state_dir, "server.json"), json.dumps(info, indent=2) + "\n")
    ready = time.monotonic()  # the lifetime counts from here
    watch_pid = args.watch_pid if args.watch_pid and args.watch_pid > 1 else None
    watch_start = proc_start_time(watch_pid) if watch_pid else None
    print(
        f"{time.strftime('%H:%M:%S')} serving {base} (pid {os.getpid()}, watching "
        f"{watch_pid or 'nothing'}, lifetime {args.lifetime} s, started in "
        f"{time.monotonic() - started:.2f} s)",
        file=sys.stderr,
    )

    reason = "signal"
    while not stop.wait(0.25):
        if time.monotonic() - ready > args.lifetime:
            reason = f"lifetime of {args.lifetime} s reached"
            break
        if watch_pid and (watch_start is None or proc_start_time(watch_pid) != watch_start):
            reason = f"watched process {watch_pid} is gone"
            break
    print(f"{time.strftime('%H:%M:%S')} stopping: {reason}", file=sys.stderr)
    httpd.shutdown()
    httpd.server_close()
    if recorded_pid(state_dir) == os.getpid():  # not replaced by a newer server
        for name in ("server.json", "server.pid"):
            try:
                os.unlink(os.path.join(state_dir, name))
            except FileNotFoundError:
                pass
    sys.stderr.flush()
    os._exit(0)  # no slow interpreter teardown: request threads are daemons anyway


def main():
    parser = argparse.ArgumentParser(prog="auth-server.sh", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="{start,stop}")
    start = sub.add_parser("start", help="start a server for STATE_DIR")
    stop = sub.add_parser("stop", help="stop the server of STATE_DIR (idempotent)")
    serve_parser = sub.add_parser("_serve", help=argparse.SUPPRESS)
    for p in (start, stop, serve_parser):
        p.add_argument("state_dir", metavar="STATE_DIR")
    for p in (start, serve_parser):
        p.add_argument("--watch-pid", type=int, default=None,
                       help="stop when this process is gone (default: the caller; 0: none)")
        p.add_argument("--lifetime", type=int, default=DEFAULT_LIFETIME,
                       help=f"stop after this many seconds (default {DEFAULT_LIFETIME})")
    serve_parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if args.command == "start":
        return cmd_start(args)
    if args.command == "stop":
        return cmd_stop(args)
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
