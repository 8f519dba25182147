#!/usr/bin/env python3
"""A scripted user with a browser, for the Microsoft identity platform stand-in
(Tests/Support/microsoft-identity-platform.py): use it as $BROWSER. Python 3 standard library.

    microsoft-browser.py URL
        What tokenctl runs as $BROWSER with the authorization URL. It detaches and returns
        at once (MICROSOFT_STANDIN_FOREGROUND=1 keeps it in the foreground), then GETs URL
        over HTTPS trusting only MICROSOFT_STANDIN_CA, follows no redirect blindly: it reads
        the stand-in's 302 Location (or its form_post page), checks that it points at the
        loopback interface (http://localhost:PORT/..., http://127.0.0.1:PORT/...), and GETs
        (or POSTs) it there, so that tokenctl's listener receives the code or the error.
    microsoft-browser.py --device VERIFICATION_URI [USER_CODE]
        The user on another device: opens VERIFICATION_URI (the stand-in's /devicelogin),
        enters USER_CODE and allows or declines. Runs in the foreground and exits 0 when the
        stand-in shows the expected outcome (Device Authorized, or Device Denied for deny).

Who signs in: MICROSOFT_STANDIN_USER, when set, is the account the person types; it is
sent to the stand-in (only to it, never to the loopback listener) as the browser's session
cookie `standin_user`, and wins over the login_hint tokenctl put in the URL, as a person
typing another account would. Unset, the stand-in takes the URL's login_hint, else its
default user (settable with its control API). The browser never edits the URL tokenctl
gave it. MICROSOFT_STANDIN_SESSION, when set, is the account the browser is already signed
in to Microsoft as (the cookie `standin_session`): the stand-in signs it in again without
asking when the request sends no prompt and no login_hint naming someone else.

Environment
    MICROSOFT_STANDIN_CA       the stand-in's CA file (its info file's ca_file); required
    MICROSOFT_STANDIN_USER     see above
    MICROSOFT_STANDIN_SESSION  see above
    MICROSOFT_STANDIN_ACCOUNT_KIND  work | personal: which account the person picks when
                               an address has both (the cookie `standin_kind`)
    MICROSOFT_STANDIN_ACTION   allow (default) | deny (the user declines: the stand-in
                               redirects error=access_denied; in device mode the request is
                               declined) | ignore (do nothing) | print (URL mode: write the
                               final redirect URL to MICROSOFT_STANDIN_OUTPUT, mode 0600,
                               instead of loading it)
    MICROSOFT_STANDIN_OUTPUT   see print
    MICROSOFT_STANDIN_LOG      a file to append one line per step to
    MICROSOFT_STANDIN_TIMEOUT  give up after this many seconds (default and maximum 55)
    MICROSOFT_STANDIN_FOREGROUND  1: do not detach in URL mode

Nothing secret (codes, tokens, query strings) reaches the log, stdout or stderr: requests
are logged as method, path and status.

Exit status (foreground): 0 done, 1 failed (see the log), 2 usage, 3 timed out.
"""

import html.parser
import http.client
import os
import re
import ssl
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import browser_standin  # noqa: E402
from browser_standin import carried, Failure  # noqa: E402

MAX_SECONDS = 55
ACTIONS = ("allow", "deny", "ignore", "print")
log = browser_standin.logger("MICROSOFT_STANDIN_LOG", "microsoft-browser")


def timeout_seconds():
    return browser_standin.timeout_seconds("MICROSOFT_STANDIN_TIMEOUT", MAX_SECONDS)
LOOPBACK = ("localhost", "127.0.0.1")


class Browser:
    def __init__(self, deadline):
        self.deadline = deadline
        ca = os.environ.get("MICROSOFT_STANDIN_CA")
        if not ca:
            raise Failure("set MICROSOFT_STANDIN_CA to the stand-in's CA file")
        self.context = ssl.create_default_context(cafile=ca)
        user = os.environ.get("MICROSOFT_STANDIN_USER")
        action = (os.environ.get("MICROSOFT_STANDIN_ACTION") or "allow").strip().lower()
        cookies = []
        if user:
            cookies.append("standin_user=" + urllib.parse.quote(user, safe=""))
        kind = os.environ.get("MICROSOFT_STANDIN_ACCOUNT_KIND")
        if kind in ("work", "personal"):
            cookies.append("standin_kind=" + kind)
        session = os.environ.get("MICROSOFT_STANDIN_SESSION")
        if session:
            cookies.append("standin_session=" + urllib.parse.quote(session, safe=""))
        if action == "deny":
            cookies.append("standin_consent=deny")
        self.cookie = "; ".join(cookies)

    def remaining(self):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Failure("out of time")
        return min(10.0, left)

    def request(self, method, url, body=None, stand_in=True, headers=None):
        """One request, no redirect followed: (status, headers, body)."""
        parts = urllib.parse.urlsplit(url)
        if parts.hostname not in LOOPBACK and parts.hostname != "::1":
            raise Failure("refusing to leave the loopback interface for %s" % parts.hostname)
        if parts.scheme == "https":
            connection = http.client.HTTPSConnection(parts.hostname, parts.port or 443, timeout=self.remaining(),
                                                     context=self.context)
        elif parts.scheme == "http":
            connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=self.remaining())
        else:
            raise Failure("unsupported scheme %s" % parts.scheme)
        target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
        all_headers = {"User-Agent": "tokenctl-microsoft-browser/1", "Accept": "text/html,application/json"}
        if stand_in and self.cookie:
            all_headers["Cookie"] = self.cookie
        all_headers.update(headers or {})
        try:
            connection.request(method, target, body=body, headers=all_headers)
            response = connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            log("%s %s error %s" % (method, parts.path, type(error).__name__))
            raise Failure("%s on %s://%s%s" % (type(error).__name__, parts.scheme, parts.netloc, parts.path)) from None
        finally:
            connection.close()
        log("%s %s %d" % (method, parts.path, response.status))
        return response.status, response, data


class FormParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.action = None
        self.inputs = []
        self.meta = {}
        self.text = []

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        if tag == "form" and self.action is None:
            self.action = attrs.get("action", "")
        elif tag == "input" and attrs.get("type") == "hidden":
            self.inputs.append((attrs.get("name", ""), attrs.get("value", "")))
        elif tag == "meta" and "name" in attrs:
            self.meta[attrs["name"]] = attrs.get("content", "")

    def handle_data(self, data):
        self.text.append(data)


def parse(body):
    parser = FormParser()
    parser.feed(body.decode("utf-8", "replace"))
    parser.close()
    return parser


def page_error(data):
    text = " ".join(" ".join(parse(data).text).split())
    found = re.search(r"AADSTS\d+", text)
    return found.group(0) if found else "no AADSTS code"


def run_authorization(url, action):
    browser = Browser(time.monotonic() + timeout_seconds())
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "https":
        raise Failure("the authorization URL is not https")
    status, response, data = browser.request("GET", url)
    if status in (301, 302, 303, 307, 308):
        location = response.getheader("Location") or ""
        final = urllib.parse.urljoin(url, location)
        method, body = "GET", None
    elif status == 200 and b"hiddenform" in data:
        # response_mode=form_post: the page a browser would submit by script.
        form = parse(data)
        final = urllib.parse.urljoin(url, form.action or "")
        method, body = "POST", urllib.parse.urlencode(form.inputs).encode()
    else:
        raise Failure("the stand-in did not redirect (HTTP %d, %s)" % (status, page_error(data)))
    target = urllib.parse.urlsplit(final)
    if target.hostname not in LOOPBACK or target.scheme not in ("http", "https"):
        raise Failure("the redirect does not point at the loopback interface")
    carried(target.query if method == "GET" else (body or b"").decode(), log)
    if target.fragment:
        raise Failure("response_mode=fragment cannot reach a loopback listener")
    if action == "print":
        output = os.environ.get("MICROSOFT_STANDIN_OUTPUT")
        if not output:
            raise Failure("print: set MICROSOFT_STANDIN_OUTPUT")
        temporary = "%s.%d.tmp" % (output, os.getpid())
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(final + "\n")
        os.replace(temporary, output)
        log("wrote the redirect URL to the output file")
        return 0
    headers = {"Content-Type": "application/x-www-form-urlencoded"} if method == "POST" else None
    status, _, _ = browser.request(method, final, body, stand_in=False, headers=headers)
    log("callback status %d" % status)
    return 0 if status < 400 or action == "deny" else 1


def run_device(verification_uri, user_code, action):
    if action not in ("allow", "deny"):
        raise Failure("--device takes MICROSOFT_STANDIN_ACTION allow or deny, not %r" % action)
    browser = Browser(time.monotonic() + timeout_seconds())
    parts = urllib.parse.urlsplit(verification_uri)
    query = dict(urllib.parse.parse_qsl(parts.query))
    if user_code:
        query["user_code"] = user_code
    if not query.get("user_code"):
        raise Failure("no user code given and none in the verification URI")
    query["decision"] = action
    # The page first, as a person would open it, then the code and the decision.
    status, _, _ = browser.request("GET", urllib.parse.urlunsplit(parts._replace(query="", fragment="")))
    if status != 200:
        raise Failure("the verification page answered HTTP %d" % status)
    log("entering the user code; device: %s" % action)
    status, _, data = browser.request("GET", urllib.parse.urlunsplit(
        parts._replace(query=urllib.parse.urlencode(query), fragment="")))
    if status != 200:
        raise Failure("the stand-in refused: HTTP %d, %s" % (status, page_error(data)))
    outcome = parse(data).meta.get("standin-outcome", "")
    log("device status page: %s" % (outcome or "unknown"))
    expected = "approved" if action == "allow" else "declined"
    return 0 if outcome == expected else 1


def main(argv):
    return browser_standin.main(
        argv, "microsoft-browser.py", "MICROSOFT_STANDIN", ACTIONS, log, timeout_seconds(), run_authorization, run_device,
        detail=False)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
