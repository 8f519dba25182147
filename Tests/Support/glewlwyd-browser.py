#!/usr/bin/python3
"""A scripted user with a browser for Tests/Support/glewlwyd-server.py: use it as $BROWSER.

    glewlwyd-browser.py URL

URL is an authorization request to the server's OpenID Connect plugin. The user signs in
through glewlwyd's own API, as its login page would: POST /api/auth/ with the password
(a session cookie), PUT /api/auth/grant/CLIENT_ID with the scopes the request asks for
(glewlwyd's consent), then GET the login page's `callback_url` with `g_continue`, which
glewlwyd answers with the redirect to the client. That redirect (code, state, iss) is
delivered to the client's redirect_uri, tokenctl's loopback listener, with a plain GET and
no cookie. Detaches and returns at once, as a browser does (GLEWLWYD_BROWSER_FOREGROUND=1
stays in the foreground).

Environment:
    GLEWLWYD_BROWSER_SERVER_JSON  the server.json written by glewlwyd-server.py start (required)
    GLEWLWYD_BROWSER_USER         user name (default: ada)
    GLEWLWYD_BROWSER_PASSWORD     password (default: that user's in server.json)
    GLEWLWYD_BROWSER_ACTION       allow (default) | print (write the final redirect URL to
                                  GLEWLWYD_BROWSER_OUTPUT, mode 0600, instead of loading it)
                                  | ignore (do nothing)
    GLEWLWYD_BROWSER_OUTPUT       see print
    GLEWLWYD_BROWSER_LOG          file to append one line per step to
    GLEWLWYD_BROWSER_TIMEOUT      give up after this many seconds (default and maximum 55)
    GLEWLWYD_BROWSER_FOREGROUND   1: do not detach

Nothing secret (codes, tokens, passwords, cookies, query strings) is written to the log,
stdout or stderr: requests are logged as method, path and status only.

Exit status (foreground): 0 done, 1 failed (the reason is on stderr and in the log),
2 usage, 3 timed out. Standard library only: Debian's python3 runs it.
"""
import json
import os
import sys
import time
from urllib.parse import parse_qs, quote, urlsplit

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import browser_standin  # noqa: E402
from browser_standin import carried, Failure, origin, redact  # noqa: E402

MAX_SECONDS = 55
ACTIONS = ("allow", "print", "ignore")
log = browser_standin.logger("GLEWLWYD_BROWSER_LOG", "glewlwyd-browser")


def timeout_seconds():
    return browser_standin.timeout_seconds("GLEWLWYD_BROWSER_TIMEOUT", MAX_SECONDS)


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body


class Browser(browser_standin.Browser):
    def __init__(self, deadline):
        super().__init__(deadline, "tokenctl-glewlwyd-browser/1", 10.0, log)

    def request(self, method, url, body=None, label=None, cookies=True, patient=False):
        data, headers = None, {}
        if body is not None:
            data, headers = json.dumps(body).encode(), {"Content-Type": "application/json"}
        return Response(*self.send(method, url, data, headers, label, cookies, patient))


def read_server(path):
    return browser_standin.read_server(path, "GLEWLWYD_BROWSER_SERVER_JSON", "glewlwyd-server.py start")


def credentials(server):
    return browser_standin.credentials(server, "GLEWLWYD_BROWSER", "ada")


def run(url, action):
    deadline = time.monotonic() + timeout_seconds()
    server = read_server(os.environ.get("GLEWLWYD_BROWSER_SERVER_JSON"))
    authorization = server["endpoints"]["authorization"]
    if origin(url) != origin(authorization) or urlsplit(url).path.rstrip("/") != urlsplit(authorization).path.rstrip("/"):
        raise Failure(f"not this server's authorization endpoint: {redact(url)}")
    query = parse_qs(urlsplit(url).query)
    client_id = (query.get("client_id") or [""])[0]
    redirect_uri = (query.get("redirect_uri") or [""])[0]
    scope = (query.get("scope") or [""])[0]
    if not client_id or not redirect_uri:
        raise Failure("the authorization URL has no client_id or redirect_uri")
    browser = Browser(deadline)

    # 1. The authorization endpoint sends a user without a session to its login page,
    #    with the request to come back to as callback_url.
    first = browser.request("GET", url)
    location = first.headers.get("Location") if first.status in (301, 302, 303, 307, 308) else None
    if location is None:
        hint = (" (glewlwyd answers 403 to an unknown client and to a redirect_uri that is not"
                " registered exactly, port included)") if first.status == 403 else ""
        raise Failure(f"the authorization endpoint answered {first.status}, not a redirect{hint}")
    if location.startswith(redirect_uri.split("?", 1)[0]):
        final = location  # an error for the client, such as invalid_scope: deliver it
        log("the server redirected to the client at once")
    else:
        login_page = urlsplit(location)
        callback = (parse_qs(login_page.query).get("callback_url") or [""])[0]
        if not callback or origin(callback) != origin(authorization):
            raise Failure(f"expected glewlwyd's login page with a callback_url, got {redact(location)}")
        log(f"login page {login_page.path}")

        # 2. Sign in, as the login page does.
        user, password = credentials(server)
        log(f"signing in as {user}")
        signed_in = browser.request("POST", server["endpoints"]["login"], {"username": user, "password": password})
        if signed_in.status != 200:
            raise Failure(f"sign-in as {user} refused (HTTP {signed_in.status})")

        # 3. Consent: grant the client the scopes it asks for. glewlwyd keeps only those the
        #    user holds, and answers 401 if that leaves none.
        granted = browser.request(
            "PUT", server["endpoints"]["grant"] + quote(client_id, safe=""), {"scope": scope},
            label="PUT /api/auth/grant/CLIENT_ID")
        if granted.status != 200:
            raise Failure(f"granting scopes {scope!r} refused (HTTP {granted.status})")
        log(f"granted: {scope}")

        # 4. Back to the authorization endpoint, as the login page's Continue button does.
        again = browser.request("GET", callback + ("&" if "?" in callback else "?") + "g_continue")
        final = again.headers.get("Location") if again.status in (301, 302, 303, 307, 308) else None
        if final is None:
            raise Failure(f"the authorization endpoint answered {again.status} after sign-in, not a redirect")
        if not final.startswith(redirect_uri.split("?", 1)[0]):
            raise Failure(
                f"after sign-in glewlwyd redirected to {redact(final)}, not to the client"
                " (a scope the session lacks sends the user back to the login page)")

    carried(urlsplit(final).query, log)
    if action == "print":
        output = os.environ.get("GLEWLWYD_BROWSER_OUTPUT")
        if not output:
            raise Failure("print: set GLEWLWYD_BROWSER_OUTPUT")
        write_output(output, final)
        log("wrote the redirect URL to the output file")
        return 0

    # 5. The client's loopback listener.
    delivered = browser.request("GET", final, label="callback status", cookies=False, patient=True)
    if delivered.status >= 400:
        raise Failure(f"the client's redirect_uri answered {delivered.status}")
    return 0


def write_output(output, line):
    tmp = f"{output}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(line + "\n")
    os.replace(tmp, output)


def main(argv):
    return browser_standin.main(
        argv, "glewlwyd-browser.py", "GLEWLWYD_BROWSER", ACTIONS, log, timeout_seconds(), run, None)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
