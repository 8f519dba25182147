"""What tokenctl's scripted users with a browser share (scripted-browser.sh,
glewlwyd-browser.py, microsoft-browser.py): going on in the background as a browser does,
keeping URLs' secrets out of their logs, and their log and time limit.
"""

import os
import re
import signal
import sys
from urllib.parse import urlsplit


def detach():
    """Goes on in a background grandchild; the caller's child exits 0 at once, as a
    browser returns to the program that opened it."""
    if os.fork() > 0:
        os._exit(0)
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


def redact(text):
    """Drops query strings and fragments from anything that may quote a URL: codes,
    states and tokens travel there."""
    return re.sub(r"[?#][^\s'\"<>)]*", "?...", str(text))


def origin(url):
    """(scheme, host, port) of `url`, the port filled in."""
    parts = urlsplit(url)
    return (parts.scheme, parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))


def timeout_seconds(variable, maximum):
    """The seconds the environment's `variable` gives, from 1 up to `maximum` (its default)."""
    try:
        return max(1.0, min(float(os.environ.get(variable) or maximum), maximum))
    except ValueError:
        return float(maximum)


def command_line(argv, name, variable, actions):
    """(mode, action) of a scripted browser run as `NAME URL` (mode "url") or `NAME
    --device VERIFICATION_URI [USER_CODE]` ("device"), the action from the environment's
    `variable` (default "allow"), or None when either is wrong, said on stderr (status 2).
    """
    action = (os.environ.get(variable) or "allow").strip().lower()
    if argv[:1] == ["--device"] and len(argv) in (2, 3):
        mode = "device"
    elif len(argv) == 1 and not argv[0].startswith("-"):
        mode = "url"
    else:
        print("usage: %s URL | %s --device VERIFICATION_URI [USER_CODE]" % (name, name), file=sys.stderr)
        return None
    if action not in actions:
        print("%s: unknown %s %r" % (name, variable, action), file=sys.stderr)
        return None
    return mode, action


def main(argv, name, prefix, actions, log, seconds, run_authorization, run_device, failure, detail=True):
    """A scripted browser's run from its command line (`command_line`, the action in
    PREFIX_ACTION) to its exit status (`exit_status`): in the background for a URL unless
    PREFIX_FOREGROUND is 1, stopped after `seconds`, and the URL logged without its query.
    `run_authorization(url, action)` and `run_device(uri, user_code, action)` do the work.
    """
    parsed = command_line(argv, name, prefix + "_ACTION", actions)
    if parsed is None:
        return 2
    mode, action = parsed
    if mode == "url" and os.environ.get(prefix + "_FOREGROUND") != "1":
        detach()
    stop_after(seconds, log)
    url = argv[1] if mode == "device" else argv[0]
    shown = urlsplit(url)
    log("start: %s mode, action %s, %s://%s%s" % (mode, action, shown.scheme, shown.netloc, shown.path))

    def step():
        if action == "ignore":
            return 0
        if mode == "device":
            return run_device(url, argv[2] if len(argv) == 3 else None, action)
        return run_authorization(url, action)

    return exit_status(name, log, step, failure, detail)


def stop_after(seconds, log):
    """A hard stop in `seconds` (and 2 more) whatever happens, logged, with status 3: the
    requests' own timeouts should come first."""
    def on_alarm(*_):
        log("timed out")
        os._exit(3)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(seconds) + 2)


def exit_status(name, log, step, failure, detail=True):
    """The status `step()` returns, or 1 when it raises: `failure` (the script's own
    exception) with its message, anything else by its type and, with `detail`, its
    message. Never a traceback, and the message redacted: either could quote a URL with a
    code. The outcome is logged, and a failure printed on stderr as `name: reason`.
    """
    try:
        status = step()
    except failure as error:
        reason = redact(error)
    except Exception as error:
        reason = type(error).__name__ + (": " + redact(error) if detail else "")
    else:
        log("done: exit %d" % status)
        return status
    log("failed: " + reason)
    print("%s: %s" % (name, reason), file=sys.stderr)
    log("done: exit 1")
    return 1


def logger(variable, name):
    """A function that appends a line, headed by `name` and the pid, to the file the
    environment's `variable` names; it does nothing without one, and never fails."""
    def log(line):
        path = os.environ.get(variable)
        if not path:
            return
        try:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write("%s[%d] %s\n" % (name, os.getpid(), line))
        except OSError:
            pass
    return log
