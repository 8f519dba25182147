"""What tokenctl's scripted users with a browser share (scripted-browser.sh,
glewlwyd-browser.py, lemonldap-ng-browser.py, microsoft-browser.py): going on in the
background as a browser does, keeping URLs' secrets out of their logs, their log and time
limit, and for those on urllib, requests and the server.json that names the user.
"""

import http.cookiejar
import json
import os
import re
import signal
import sys
import time
import urllib.error
import urllib.request
from urllib.parse import parse_qs, urlsplit


class Failure(Exception):
    """A step of a scripted user that went wrong; the message is the reason it gives."""


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


def carried(query, log):
    """The parameters the redirect to the client carries in `query`, logged as the error
    or whether there is a code, never the code itself."""
    params = parse_qs(query)
    log(f"redirect carries error={params['error'][0]}" if "error" in params
        else "redirect carries " + ("a code" if "code" in params else "no code"))
    return params


def timeout_seconds(variable, maximum):
    """The seconds the environment's `variable` gives, from 1 up to `maximum` (its default)."""
    try:
        return max(1.0, min(float(os.environ.get(variable) or maximum), maximum))
    except ValueError:
        return float(maximum)


def command_line(argv, name, variable, actions, device=True):
    """(mode, action) of a scripted browser run as `NAME URL` (mode "url") or, with
    `device`, `NAME --device VERIFICATION_URI [USER_CODE]` ("device"), the action from the
    environment's `variable` (default "allow"), or None when either is wrong, said on
    stderr (status 2).
    """
    action = (os.environ.get(variable) or "allow").strip().lower()
    if device and argv[:1] == ["--device"] and len(argv) in (2, 3):
        mode = "device"
    elif len(argv) == 1 and not argv[0].startswith("-"):
        mode = "url"
    else:
        usage = " | %s --device VERIFICATION_URI [USER_CODE]" % name if device else ""
        print("usage: %s URL%s" % (name, usage), file=sys.stderr)
        return None
    if action not in actions:
        print("%s: unknown %s %r" % (name, variable, action), file=sys.stderr)
        return None
    return mode, action


def main(argv, name, prefix, actions, log, seconds, run_authorization, run_device, detail=True):
    """A scripted browser's run from its command line (`command_line`, the action in
    PREFIX_ACTION) to its exit status (`exit_status`): in the background for a URL unless
    PREFIX_FOREGROUND is 1, stopped after `seconds`, and the URL logged without its query.
    `run_authorization(url, action)` and `run_device(uri, user_code, action)` do the work;
    a browser without a device flow passes None for the latter.
    """
    parsed = command_line(argv, name, prefix + "_ACTION", actions, device=run_device is not None)
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

    return exit_status(name, log, step, detail)


def stop_after(seconds, log):
    """A hard stop in `seconds` (and 2 more) whatever happens, logged, with status 3: the
    requests' own timeouts should come first."""
    def on_alarm(*_):
        log("timed out")
        os._exit(3)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(seconds) + 2)


def exit_status(name, log, step, detail=True):
    """The status `step()` returns, or 1 when it raises: `Failure` with its message,
    anything else by its type and, with `detail`, its message. Never a traceback, and the
    message redacted: either could quote a URL with a code. The outcome is logged, and a
    failure printed on stderr as `name: reason`.
    """
    try:
        status = step()
    except Failure as error:
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


class NoRedirects(urllib.request.HTTPRedirectHandler):
    """Each redirect is a step of the script's own."""

    def redirect_request(self, *args, **kwargs):
        return None


class Browser:
    """Requests as the scripted users on urllib send them: no proxies (everything is on
    127.0.0.1), no automatic redirects, each within what is left of `deadline` and at most
    `request_seconds` (a `patient` one, the redirect to the client's listener, which holds
    its answer until the sign-in has ended, as long as is left: a browser waits minutes),
    logged as `LABEL STATUS` (default label: method and path). Cookies
    are kept unless a request goes without: they are not kept apart by port, and the
    client's listener on 127.0.0.1 must not get the server's session cookie.
    """

    def __init__(self, deadline, user_agent, request_seconds, log):
        self.deadline = deadline
        self.user_agent = user_agent
        self.request_seconds = request_seconds
        self.log = log
        self.cookies = http.cookiejar.CookieJar()
        self.with_cookies = urllib.request.build_opener(
            urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(self.cookies), NoRedirects)
        self.without_cookies = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirects)

    def send(self, method, url, data=None, headers=(), label=None, cookies=True, patient=False):
        """(status, headers, body) of the answer, an error status included; `Failure`
        when the time is up or the request does not get an answer."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise Failure("out of time")
        request = urllib.request.Request(
            url, data=data, method=method, headers={"User-Agent": self.user_agent, **dict(headers)})
        label = label or f"{method} {urlsplit(url).path}"
        opener = self.with_cookies if cookies else self.without_cookies
        try:
            timeout = remaining if patient else min(self.request_seconds, remaining)
            with opener.open(request, timeout=timeout) as response:
                answer = (response.status, response.headers, response.read())
        except urllib.error.HTTPError as error:
            answer = (error.code, error.headers, error.read())
        except (OSError, ValueError) as error:
            self.log(f"{label} error {type(error).__name__}")
            raise Failure(f"{label}: {type(error).__name__}") from None
        self.log(f"{label} {answer[0]}")
        return answer


def read_server(path, variable, started_by):
    """The server.json at `path`, which the environment's `variable` gave and `started_by`
    wrote; `Failure` without one, or when it cannot be read."""
    if not path:
        raise Failure(f"set {variable} to the server.json of {started_by}")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        raise Failure(f"cannot read {path}: {type(error).__name__}") from None


def credentials(server, prefix, default_user):
    """(user, password): PREFIX_USER (default `default_user`), and PREFIX_PASSWORD or that
    user's password in `server`'s users."""
    user = os.environ.get(prefix + "_USER") or default_user
    password = os.environ.get(prefix + "_PASSWORD")
    if password is None:
        match = [u for u in server.get("users", []) if u.get("username") == user]
        if not match:
            raise Failure(f"no user {user!r} in server.json")
        password = match[0]["password"]
    return user, password
