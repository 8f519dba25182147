"""What tokenctl's scripted users with a browser share (scripted-browser,
glewlwyd-browser, microsoft-browser): going on in the background as a browser does,
keeping URLs' secrets out of their logs, and their log and time limit.
"""

import os
import re
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
