"""What the test servers that run as a supervised child share (Tests/AuthServer/control.py
behind auth-server.sh, glewlwyd-server.py): `start STATE_DIR` runs the script's `_serve`
in a session of its own, records its pid in STATE_DIR/server.pid and waits for the
server.json that names it; `stop STATE_DIR` ends the process the folder records, and only
when it is still ours (its command line names `_serve` and the folder). The server stops
by itself when the watched process is gone or its lifetime is over. Standard library
only: the venv's Python and Debian's python3 both run it.
"""
import argparse
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time


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


def is_serving(pid, state_dir):
    """Whether `pid` is a `_serve` of `state_dir` (a recorded pid may have been reused)."""
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


def remove(state_dir, *names):
    for name in names:
        try:
            os.unlink(os.path.join(state_dir, name))
        except FileNotFoundError:
            pass


def tail(path, lines=30):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def end(process, seconds):
    """Stops a child: SIGTERM and up to `seconds` for it to go, then SIGKILL (at once for 0)."""
    if process.poll() is not None:
        return
    if seconds:
        process.terminate()
        try:
            process.wait(seconds)
            return
        except subprocess.TimeoutExpired:
            pass
    process.kill()
    process.wait()


@dataclasses.dataclass(frozen=True)
class Server:
    """One kind of supervised server: the few things in which they differ."""

    prog: str  # its name in messages
    script: str  # the file whose `_serve` runs the server
    watch_variable: str  # the environment's stand-in for --watch-pid
    start_seconds: float  # how long `start` waits for server.json
    stop_seconds: float  # how long `stop` waits after SIGTERM
    abort_seconds: float = 0  # the same for a `start` that failed (0: SIGKILL at once)
    # More time for `start` than it says, for a supervisor that reports its own timeout first.
    start_slack: float = 0
    private: bool = False  # state folder and log for this user only (password hashes, keys)

    def fail(self, message):
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(1)

    def start(self, args, timeout_tail=True):
        """Runs `_serve` for args.state_dir and waits for its server.json; returns that
        and a function that stops the server, removes its files and fails with a message.
        timeout_tail: whether a start that took too long shows the log's last lines."""
        state_dir = os.path.abspath(args.state_dir)
        if self.private:
            os.makedirs(state_dir, mode=0o700, exist_ok=True)
            os.chmod(state_dir, 0o700)
        else:
            os.makedirs(state_dir, exist_ok=True)
        old = recorded_pid(state_dir)
        if old and is_serving(old, state_dir):
            self.fail(f"a server is already running for {state_dir} (pid {old}); stop it first")
        remove(state_dir, "server.json", "server.pid")

        watch_pid = args.watch_pid
        if watch_pid is None:
            watch_pid = int(os.environ.get(self.watch_variable) or os.getppid())
        if watch_pid > 1 and proc_start_time(watch_pid) is None:
            self.fail(f"there is no process {watch_pid} to watch")
        log_path = os.path.join(state_dir, "server.log")
        log = open(log_path, "ab")
        if self.private:
            os.chmod(log_path, 0o600)
        child = subprocess.Popen(
            [sys.executable, "-u", os.path.abspath(self.script), "_serve", state_dir,
             "--watch-pid", str(watch_pid), "--lifetime", str(args.lifetime)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=True,
            start_new_session=True,  # not killed with the caller's process group; it watches the caller
            cwd="/",
        )
        write_atomically(os.path.join(state_dir, "server.pid"), f"{child.pid}\n")

        def abort(message):
            end(child, self.abort_seconds)
            remove(state_dir, "server.json", "server.pid")
            self.fail(message)

        deadline = time.monotonic() + self.start_seconds + self.start_slack
        server_json = os.path.join(state_dir, "server.json")
        while True:
            if child.poll() is not None:
                abort(f"the server exited with status {child.returncode}; see {log_path}:\n" + tail(log_path))
            if os.path.exists(server_json):
                with open(server_json, encoding="utf-8") as f:
                    info = json.load(f)
                if info.get("pid") == child.pid:
                    return info, abort
            if time.monotonic() > deadline:
                abort(f"the server did not start within {self.start_seconds} s; see {log_path}"
                      + (":\n" + tail(log_path) if timeout_tail else ""))
            time.sleep(0.05)

    def stop(self, args):
        state_dir = os.path.abspath(args.state_dir)
        pid = recorded_pid(state_dir)
        if pid and is_serving(pid, state_dir):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + self.stop_seconds
            while is_serving(pid, state_dir) and time.monotonic() < deadline:
                time.sleep(0.05)
            if is_serving(pid, state_dir):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        remove(state_dir, "server.json", "server.pid")
        return 0

    def main(self, description, default_lifetime, start, serve, serve_options=()):
        """Parses `start`, `stop` or `_serve` and runs it. serve_options: more
        (name, keywords) options of `_serve`."""
        parser = argparse.ArgumentParser(prog=self.prog, description=description)
        sub = parser.add_subparsers(dest="command", required=True, metavar="{start,stop}")
        start_parser = sub.add_parser("start", help="start a server for STATE_DIR")
        stop_parser = sub.add_parser("stop", help="stop the server of STATE_DIR (idempotent)")
        serve_parser = sub.add_parser("_serve", help=argparse.SUPPRESS)
        for p in (start_parser, stop_parser, serve_parser):
            p.add_argument("state_dir", metavar="STATE_DIR")
        for p in (start_parser, serve_parser):
            p.add_argument("--watch-pid", type=int, default=None,
                           help="stop when this process is gone (default: the caller; 0: none)")
            p.add_argument("--lifetime", type=int, default=default_lifetime,
                           help=f"stop after this many seconds (default {default_lifetime})")
        for name, keywords in serve_options:
            serve_parser.add_argument(name, **keywords)
        args = parser.parse_args()
        if args.command == "start":
            return start(args)
        if args.command == "stop":
            return self.stop(args)
        return serve(args)


class Published:
    """A server that has written its server.json: from here its lifetime counts, and it
    watches the process it was told to."""

    def __init__(self, state_dir, info, args):
        self.state_dir = state_dir
        write_atomically(os.path.join(state_dir, "server.json"), json.dumps(info, indent=2) + "\n")
        self.ready = time.monotonic()  # the lifetime counts from here
        self.lifetime = args.lifetime
        self.watch_pid = args.watch_pid if args.watch_pid and args.watch_pid > 1 else None
        self.watch_start = proc_start_time(self.watch_pid) if self.watch_pid else None

    def end_reason(self):
        """Why the server should stop now, or None."""
        if time.monotonic() - self.ready > self.lifetime:
            return f"lifetime of {self.lifetime} s reached"
        if self.watch_pid and (self.watch_start is None or proc_start_time(self.watch_pid) != self.watch_start):
            return f"watched process {self.watch_pid} is gone"
        return None

    def withdraw(self):
        """Removes the server's files, unless a newer server has replaced them."""
        if recorded_pid(self.state_dir) == os.getpid():
            remove(self.state_dir, "server.json", "server.pid")
