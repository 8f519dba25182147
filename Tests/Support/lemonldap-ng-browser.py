#!/usr/bin/python3
"""A scripted user with a browser for Tests/Support/lemonldap-ng-server.sh: use it as $BROWSER.

    lemonldap-ng-browser.py URL

URL is an authorization request to the LemonLDAP::NG portal's OpenID Connect issuer. The
user does what a person does on the portal's pages: the login form (its hidden fields kept,
user and password filled in, posted where the form says), then, when the portal asks, the
consent page (Accept posts the form as it is; Refuse posts it with the refuse button's
value, as the page's script does). The portal's redirect to the client (code, state, or
an error) is delivered to the client's redirect_uri, tokenctl's loopback listener, with a
plain GET and no cookie. Detaches and returns at once, as a browser does
(LEMONLDAP_BROWSER_FOREGROUND=1 stays in the foreground).

Environment:
    LEMONLDAP_BROWSER_SERVER_JSON  the server.json written by lemonldap-ng-server.sh start (required)
    LEMONLDAP_BROWSER_USER         user name (default: dwho)
    LEMONLDAP_BROWSER_PASSWORD     password (default: that user's in server.json)
    LEMONLDAP_BROWSER_ACTION       allow (default) | refuse (refuse consent) | ignore (do nothing)
    LEMONLDAP_BROWSER_LOG          file to append one line per step to
    LEMONLDAP_BROWSER_TIMEOUT      give up after this many seconds (default and maximum 55)
    LEMONLDAP_BROWSER_FOREGROUND   1: do not detach

Nothing secret (codes, tokens, passwords, cookies, query strings) is written to the log,
stdout or stderr: requests are logged as method, path and status only; the log says
whether the consent page was shown.

Exit status (foreground): 0 done, 1 failed (the reason is on stderr and in the log),
2 usage, 3 timed out. Standard library only: Debian's python3 runs it.
"""
import html.parser
import os
import re
import sys
import time
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import browser_standin  # noqa: E402
from browser_standin import carried, Failure, redact  # noqa: E402

MAX_SECONDS = 55
MAX_STEPS = 10
ACTIONS = ("allow", "refuse", "ignore")
log = browser_standin.logger("LEMONLDAP_BROWSER_LOG", "lemonldap-ng-browser")


class Forms(html.parser.HTMLParser):
    """The page's forms: their attributes, fields (name, value, type) and buttons."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms = []

    def handle_starttag(self, tag, attrs):
        attrs = {k: (v or "") for k, v in attrs}
        if tag == "form":
            self.forms.append({"attrs": attrs, "fields": [], "buttons": []})
        elif self.forms and tag == "input" and attrs.get("name"):
            self.forms[-1]["fields"].append(attrs)
        elif self.forms and tag == "button":
            self.forms[-1]["buttons"].append(attrs)


class Response:
    def __init__(self, url, status, headers, body):
        self.url, self.status, self.headers, self.body = url, status, headers, body

    @property
    def location(self):
        if self.status in (301, 302, 303, 307, 308) and self.headers.get("Location"):
            return urljoin(self.url, self.headers["Location"])
        return None

    def forms(self):
        parser = Forms()
        parser.feed(self.body.decode("utf-8", "replace"))
        return parser.forms


class Browser(browser_standin.Browser):
    def __init__(self, deadline):
        super().__init__(deadline, "tokenctl-lemonldap-ng-browser/1", 20.0, log)

    def request(self, method, url, form=None, cookies=True, label=None, patient=False):
        headers = {"Accept": "text/html"}
        data = None
        if form is not None:
            data = urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        return Response(url, *self.send(method, url, data, headers, label, cookies, patient))


def read_server(path):
    return browser_standin.read_server(
        path, "LEMONLDAP_BROWSER_SERVER_JSON", "lemonldap-ng-server.sh start")


def credentials(server):
    return browser_standin.credentials(server, "LEMONLDAP_BROWSER", "dwho")


def submit(browser, page, form, values):
    """Posts `form` of `page` as a browser would: its fields, `values` over them."""
    action = urljoin(page.url, form["attrs"].get("action") or "")
    action = action.split("#", 1)[0]  # action="#": the page's own address
    method = (form["attrs"].get("method") or "get").upper()
    fields = {}
    for field in form["fields"]:
        if field.get("type") in ("checkbox", "radio") and "checked" not in field:
            continue
        fields[field["name"]] = field.get("value", "")
    fields.update(values)
    if method == "GET":
        return browser.request("GET", action + "?" + urlencode(fields), label=f"GET {urlsplit(action).path} (form)")
    return browser.request("POST", action, fields, label=f"POST {urlsplit(action).path} (form)")


def run(url, action):
    deadline = time.monotonic() + timeout_seconds()
    server = read_server(os.environ.get("LEMONLDAP_BROWSER_SERVER_JSON"))
    issuer = server["issuer"]
    if not url.startswith(issuer + "/"):
        raise Failure(f"not this portal's address: {redact(url)}")
    query = parse_qs(urlsplit(url).query)
    redirect_uri = (query.get("redirect_uri") or [""])[0]
    if not redirect_uri:
        raise Failure("the authorization URL has no redirect_uri")
    browser = Browser(deadline)
    page = browser.request("GET", url)
    final = None
    consent_shown = False
    for _ in range(MAX_STEPS):
        location = page.location
        if location is not None:
            if location.startswith(redirect_uri.split("?", 1)[0]):
                final = location
                break
            page = browser.request("GET", location)
            continue
        if page.status != 200:
            raise Failure(f"the portal answered {page.status} at {urlsplit(page.url).path}")
        forms = page.forms()
        login = [f for f in forms if any(x.get("type") == "password" for x in f["fields"])]
        confirm = [f for f in forms if any(x.get("name") == "confirm" for x in f["fields"])]
        if login:
            user, password = credentials(server)
            log(f"login form: signing in as {user}")
            page = submit(browser, page, login[0], {"user": user, "password": password})
        elif confirm:
            consent_shown = True
            form = confirm[0]
            if action == "refuse":
                refuse = [b for b in form["buttons"] if b.get("id") == "refuse"]
                if not refuse:
                    raise Failure("the consent page has no Refuse button")
                log("consent page: refusing")
                page = submit(browser, page, form, {"confirm": refuse[0].get("val", "")})
            else:
                log("consent page: accepting")
                page = submit(browser, page, form, {})
        else:
            text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.body.decode("utf-8", "replace")))
            message = re.search(r"(?i)(error[^.]{0,200})", text)
            raise Failure("the portal showed a page with neither a login nor a consent form"
                          + (f": {redact(message.group(1))}" if message else ""))
    if final is None:
        raise Failure(f"no redirect to the client after {MAX_STEPS} pages")
    log("consent page shown" if consent_shown else "no consent page")
    carried(urlsplit(final).query, log)
    delivered = browser.request("GET", final, cookies=False, label="callback status", patient=True)
    if delivered.status >= 400:
        raise Failure(f"the client's redirect_uri answered {delivered.status}")
    return 0


def timeout_seconds():
    return browser_standin.timeout_seconds("LEMONLDAP_BROWSER_TIMEOUT", MAX_SECONDS)


def main(argv):
    return browser_standin.main(
        argv, "lemonldap-ng-browser.py", "LEMONLDAP_BROWSER", ACTIONS, log, timeout_seconds(), run, None)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
