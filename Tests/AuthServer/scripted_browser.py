"""A scripted "user with a browser" for the test authorization server.

    scripted-browser.sh URL
        What tokenctl runs as $BROWSER: open the authorization URL, sign in, answer the
        consent page, then load the final redirect (tokenctl's loopback listener). Detaches
        and returns at once (SCRIPTED_BROWSER_FOREGROUND=1 to stay in the foreground).
    scripted-browser.sh --device VERIFICATION_URI [USER_CODE]
        Sign in at the RFC 8628 verification page and approve (or deny) USER_CODE; runs in
        the foreground; exits 0 when the server shows the expected outcome. Without
        USER_CODE the code must be in the URI (verification_uri_complete).

Environment:
    SCRIPTED_BROWSER_ACTION    allow (default) | deny | print | forge-state | ignore |
                               inject-foreign-code (device mode: allow | deny)
                               inject-foreign-code: a local attacker who read the
                               authorization URL (state included) signs in as itself,
                               SCRIPTED_BROWSER_ATTACKER (default grace), in a request of
                               its own with its own PKCE challenge, and delivers its code
                               to the listener with the victim's state; the victim
                               never signs in.
    SCRIPTED_BROWSER_USER      user name (default: ada)
    SCRIPTED_BROWSER_PASSWORD  password (default: that user's in SCRIPTED_BROWSER_SERVER_JSON)
    SCRIPTED_BROWSER_SERVER_JSON  path to the server.json written by auth-server.sh start
    SCRIPTED_BROWSER_OUTPUT    `print`: file that receives the final redirect URL (mode 0600);
                               `forge-state`: receives the forged callback's HTTP status
    SCRIPTED_BROWSER_PAGE      allow/deny: file that receives the visible text of the page the
                               listener answered the redirect with (mode 0600), as a person
                               reads it
    SCRIPTED_BROWSER_LOG       file to append one line per step to
    SCRIPTED_BROWSER_TIMEOUT   give up after this many seconds (default and maximum 55)
    SCRIPTED_BROWSER_FOREGROUND  1: do not detach in URL mode

Nothing secret (codes, tokens, passwords, query strings) is written to the log, stdout or
stderr: request lines are logged as method, path and status only.

Exit status (foreground): 0 done, 1 failed (see the log), 2 usage, 3 timed out.
"""
import html.parser
import json
import os
import re
import sys
import time
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit, urlunsplit

# The scripted users' shared part lives beside the other stand-ins.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "Support"))
import browser_standin  # noqa: E402
from browser_standin import carried, Failure, origin, redact  # noqa: E402

MAX_SECONDS = 55
ACTIONS = ("allow", "deny", "print", "forge-state", "ignore", "inject-foreign-code")
log = browser_standin.logger("SCRIPTED_BROWSER_LOG", "scripted-browser")


def timeout_seconds():
    return browser_standin.timeout_seconds("SCRIPTED_BROWSER_TIMEOUT", MAX_SECONDS)


# --- HTML forms ------------------------------------------------------------------------


class Form:
    def __init__(self, attrs):
        self.attrs = attrs
        self.fields = []  # (name, value, type) of inputs, buttons, textareas, selects

    def has(self, name):
        return any(n == name for n, _, _ in self.fields)

    def value(self, name):
        return next((v for n, v, _ in self.fields if n == name), None)

    def data(self, overrides=None, submit=None):
        """What a browser sends: non-submit fields, plus the one submit button pressed."""
        overrides = overrides or {}
        data = []
        for name, value, kind in self.fields:
            if not name or kind in ("submit", "button", "image", "reset"):
                continue
            if kind in ("checkbox", "radio"):
                continue
            data.append((name, overrides.pop(name, value)))
        data.extend(overrides.items())
        if submit:
            data.append(submit)
        return data


class FormParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms = []
        self.text = []
        self._form = None
        self._textarea = None

    def handle_starttag(self, tag, attrs):
        attrs = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "form":
            self._form = Form(attrs)
            self.forms.append(self._form)
        elif self._form is not None and tag == "input":
            self._form.fields.append((attrs.get("name"), attrs.get("value", ""), attrs.get("type", "text").lower()))
        elif self._form is not None and tag == "button":
            self._form.fields.append((attrs.get("name"), attrs.get("value", ""), attrs.get("type", "submit").lower()))
        elif self._form is not None and tag == "textarea":
            self._textarea = [attrs.get("name"), ""]

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "textarea" and self._textarea and self._form is not None:
            self._form.fields.append((self._textarea[0], self._textarea[1], "textarea"))
            self._textarea = None

    def handle_data(self, data):
        if self._textarea is not None:
            self._textarea[1] += data
        self.text.append(data)


def parse_page(body):
    parser = FormParser()
    parser.feed(body)
    parser.close()
    return parser.forms, " ".join(" ".join(parser.text).split())


# --- the browser -----------------------------------------------------------------------


class Browser:
    def __init__(self, deadline):
        import requests

        self.requests = requests
        self.session = requests.Session()
        self.session.trust_env = False  # no proxies, no .netrc: everything is on 127.0.0.1
        self.session.headers["User-Agent"] = "tokenctl-scripted-browser/1"
        self.deadline = deadline

    def timeout(self, patient=False):
        """At most 10 s a request, or, `patient`, as long as is left: the client's listener
        holds its answer to the redirect until the sign-in has ended, and a browser waits."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise Failure("out of time")
        return remaining if patient else min(10.0, remaining)

    def request(self, method, url, data=None, label=None, patient=False):
        try:
            response = self.session.request(
                method, url, data=data, allow_redirects=False, timeout=self.timeout(patient)
            )
        except self.requests.RequestException as error:
            log(f"{label or method + ' ' + urlsplit(url).path} error {type(error).__name__}")
            raise Failure(f"{type(error).__name__} on {redact(url)}") from None
        log(f"{label or method + ' ' + urlsplit(url).path} {response.status_code}")
        return response

    def credentials(self):
        user = os.environ.get("SCRIPTED_BROWSER_USER") or "ada"
        password = os.environ.get("SCRIPTED_BROWSER_PASSWORD")
        if password is None:
            path = os.environ.get("SCRIPTED_BROWSER_SERVER_JSON")
            if not path:
                raise Failure("set SCRIPTED_BROWSER_PASSWORD or SCRIPTED_BROWSER_SERVER_JSON")
            with open(path, encoding="utf-8") as f:
                users = json.load(f)["users"]
            match = [u for u in users if u["username"] == user]
            if not match:
                raise Failure(f"no user {user!r} in {path}")
            password = match[0]["password"]
        return user, password

    def browse(self, url, handle_page, is_final):
        """Follows redirects on the server's origin and fills in the server's forms with
        `handle_page(url, response, forms, text)` (which returns the next request, or None
        when the page is the end), until a redirect leaves the server's origin or
        `is_final(url, response)` says so. Returns (kind, url_or_response)."""
        server = origin(url)
        method, data = "GET", None
        for _ in range(25):
            response = self.request(method, url, data=data)
            if response.is_redirect or response.status_code in (301, 302, 303, 307, 308):
                location = response.headers.get("Location")
                if not location:
                    raise Failure(f"redirect without Location from {urlsplit(url).path}")
                url = urljoin(url, location)
                if origin(url) != server:
                    return "redirect", url
                method, data = "GET", None
                continue
            if is_final(url, response):
                return "page", response
            forms, text = parse_page(response.text)
            step = handle_page(url, response, forms, text)
            if step is None:
                return "page", response
            method, url, data = step
        raise Failure("too many steps")

    def login_step(self, url, forms):
        form = next((f for f in forms if f.has("password")), None)
        if form is None:
            return None
        user, password = self.credentials()
        log(f"signing in as {user}")
        action = urljoin(url, form.attrs.get("action") or url)
        return "POST", action, form.data({"username": user, "password": password})


def check_signed_in(url, response, text):
    if urlsplit(url).path.rstrip("/").endswith("/accounts/login") and "didn't match" in text:
        raise Failure("sign-in refused (wrong user name or password)")


def run_authorization(url, action):
    deadline = time.monotonic() + timeout_seconds()
    browser = Browser(deadline)
    query = parse_qs(urlsplit(url).query)
    redirect_uri = (query.get("redirect_uri") or [None])[0]

    if action == "forge-state":
        # What another local process could do: hit the loopback listener first, with a
        # made-up code and state.
        if not redirect_uri:
            raise Failure("forge-state: the authorization URL has no redirect_uri")
        forged = add_query(redirect_uri, {"code": "forged-code", "state": "forged-state"})
        try:
            response = browser.session.get(forged, allow_redirects=False, timeout=browser.timeout())
            outcome = str(response.status_code)
            log(f"forged callback status {outcome}")
        except browser.requests.RequestException as error:
            outcome = f"error {type(error).__name__}"
            log(f"forged callback {outcome}")
        if os.environ.get("SCRIPTED_BROWSER_OUTPUT"):
            write_output(outcome)
        action = "allow"

    if action == "inject-foreign-code":
        # The attacker's own authorization request: same client and redirect URI, but a
        # PKCE challenge only the attacker can answer, and the attacker's account.
        import base64, hashlib, secrets
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        victim_state = (query.get("state") or [""])[0]
        parts = urlsplit(url)
        attacker_query = {k: v[0] for k, v in query.items()}
        attacker_query.update({"code_challenge": challenge, "state": "attacker-state"})
        url = urlunsplit(parts._replace(query=urlencode(attacker_query)))
        os.environ["SCRIPTED_BROWSER_USER"] = os.environ.get("SCRIPTED_BROWSER_ATTACKER") or "grace"
        os.environ.pop("SCRIPTED_BROWSER_PASSWORD", None)

    def handle_page(page_url, response, forms, text):
        check_signed_in(page_url, response, text)
        step = browser.login_step(page_url, forms)
        if step:
            return step
        consent = next((f for f in forms if f.has("allow") or f.attrs.get("id") == "authorizationForm"), None)
        if consent is not None:
            allow = action != "deny"
            log("consent: allow" if allow else "consent: deny")
            submit = ("allow", consent.value("allow") or "Authorize") if allow else None
            return "POST", urljoin(page_url, consent.attrs.get("action") or page_url), consent.data(submit=submit)
        error = re.search(r"Error:\s*([a-z_]+)", text)
        raise Failure(
            f"unexpected page {urlsplit(page_url).path} (HTTP {response.status_code})"
            + (f": {error.group(1)}" if error else "")
        )

    kind, result = browser.browse(url, handle_page, lambda u, r: False)
    if kind != "redirect":
        raise Failure("the server did not redirect back to the client")
    final = result
    params = carried(urlsplit(final).query, log)

    if action == "inject-foreign-code":
        code = (params.get("code") or [""])[0]
        if not code or not redirect_uri:
            raise Failure("inject-foreign-code: the attacker got no code")
        # Everything the server sent the attacker (iss included, RFC 9207), with the
        # victim's state in place of the attacker's.
        injected = {k: v[0] for k, v in params.items()}
        injected["state"] = victim_state
        response = browser.request(
            "GET", add_query(redirect_uri, injected), label="injected callback status", patient=True)
        log(f"injected callback status {response.status_code}")
        return 0

    if action == "print":
        if not os.environ.get("SCRIPTED_BROWSER_OUTPUT"):
            raise Failure("print: set SCRIPTED_BROWSER_OUTPUT")
        write_output(final)
        log("wrote the redirect URL to the output file")
        return 0

    response = browser.request("GET", final, label="callback status", patient=True)
    if os.environ.get("SCRIPTED_BROWSER_PAGE"):
        write_file(os.environ["SCRIPTED_BROWSER_PAGE"], " ".join(parse_page(response.text)[1].split()))
    return 0 if response.status_code < 400 or action == "deny" else 1


def run_device(verification_uri, user_code, action):
    if action not in ("allow", "deny"):
        raise Failure(f"--device supports SCRIPTED_BROWSER_ACTION allow or deny, not {action!r}")
    deadline = time.monotonic() + timeout_seconds()
    browser = Browser(deadline)
    decided = []

    def handle_page(page_url, response, forms, text):
        check_signed_in(page_url, response, text)
        step = browser.login_step(page_url, forms)
        if step:
            return step
        code_form = next((f for f in forms if f.has("user_code")), None)
        if code_form is not None:
            if "Incorrect user code" in text or "Expired user code" in text or "already been used" in text:
                raise Failure("the server refused the user code: " + re.search(
                    r"(Incorrect user code|Expired user code|User code has already been used)", text).group(1))
            code = user_code or code_form.value("user_code")
            if not code:
                raise Failure("no user code given and none in the verification URI")
            log("entering the user code")
            return "POST", urljoin(page_url, code_form.attrs.get("action") or page_url), code_form.data({"user_code": code})
        decision = next((f for f in forms if f.has("action")), None)
        if decision is not None:
            choice = "accept" if action == "allow" else "deny"
            log(f"device: {choice}")
            decided.append(choice)
            return "POST", urljoin(page_url, decision.attrs.get("action") or page_url), decision.data(submit=("action", choice))
        return None

    kind, result = browser.browse(verification_uri, handle_page, lambda u, r: False)
    if kind != "page":
        raise Failure("the verification page redirected away from the server")
    _, text = parse_page(result.text)
    status = re.search(r"Device (Authorized|Denied|Authorization pending|Expired)", text, re.I)
    log(f"device status page: {status.group(0) if status else 'unknown (HTTP %d)' % result.status_code}")
    expected = "authorized" if action == "allow" else "denied"
    return 0 if decided and status and status.group(1).lower() == expected else 1


def write_output(line):
    """Replaces SCRIPTED_BROWSER_OUTPUT atomically (mode 0600) with `line`."""
    write_file(os.environ["SCRIPTED_BROWSER_OUTPUT"], line)


def write_file(output, line):
    """Replaces `output` atomically (mode 0600) with `line`."""
    tmp = f"{output}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(line + "\n")
    os.replace(tmp, output)


def add_query(url, params):
    parts = urlsplit(url)
    query = parts.query + ("&" if parts.query else "") + urlencode(params)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def main(argv):
    return browser_standin.main(
        argv, "scripted-browser.sh", "SCRIPTED_BROWSER", ACTIONS, log, timeout_seconds(), run_authorization, run_device)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
