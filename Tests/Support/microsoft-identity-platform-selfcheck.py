#!/usr/bin/env python3
"""Self-check for Tests/Support/microsoft-identity-platform.py and Tests/Support/microsoft-browser.py:
starts the stand-in, exercises each behaviour it documents with urllib over HTTPS (trusting
only its CA), and asserts the answers: discovery and keys, each kind of tenant, members and
guests, the authorization code flow with PKCE, refresh tokens not bound to a tenant,
per-call scopes and consent, every scripted fault, the device grant (allow, decline,
pending, slow_down, bad and expired codes, an app without public client flows), the
client credentials rules, Graph (me, users with paging, revokeSignInSessions with and
without the permission, userinfo, throttling), claims challenges and CAE, the scripted
browser in both modes, that no token, code or secret reaches the logs, and that the
stand-in stops by itself.

Usage: Tests/Support/microsoft-identity-platform-selfcheck.py
Prints one line per check; exits 1 at the first failure, 0 when all pass. Python 3 and
openssl only.
"""

import base64
import hashlib
import http.server
import json
import os
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
STANDIN = os.path.join(HERE, "microsoft-identity-platform.py")
BROWSER = os.path.join(HERE, "microsoft-browser.py")
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
GRAPH_APP_ID = "00000003-0000-0000-c000-000000000000"
CONSUMERS = "9188040d-6c67-4c5b-b112-36a304b66dad"
SECRET_KEYS = ("access_token", "refresh_token", "id_token", "device_code", "user_code", "code")
secrets_seen = set()
checks = 0


def check(condition, what, detail=""):
    global checks
    checks += 1
    if not condition:
        print("FAIL %s %s" % (what, detail if isinstance(detail, str) else json.dumps(detail, default=str)[:2000]))
        sys.exit(1)
    print("ok   %s" % what)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def payload(jwt):
    return json.loads(unb64(jwt.split(".")[1]))


def pkce():
    verifier = secrets.token_urlsafe(48)
    return verifier, b64url(hashlib.sha256(verifier.encode()).digest())


def start(state_dir, *args, watch=None):
    process = subprocess.Popen([STANDIN, "--state-dir", state_dir, "--watch-pid", str(watch or os.getpid()), *args])
    path = os.path.join(state_dir, "microsoft-identity-platform.json")
    for _ in range(300):
        if os.path.exists(path):
            with open(path) as handle:
                return process, json.load(handle)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    raise SystemExit("FAIL the stand-in did not publish %s" % path)


def gone_within(process, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return True
        time.sleep(0.05)
    return False


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        value = json.loads(self.body)
        if isinstance(value, dict):
            for key in SECRET_KEYS:
                if isinstance(value.get(key), str):
                    secrets_seen.add(value[key])
        return value

    def text(self):
        return self.body.decode("utf-8", "replace")


class StandIn:
    def __init__(self, info):
        self.info = info
        self.base = info["base_url"]
        self.host = info["host"]
        self.context = ssl.create_default_context(cafile=info["ca_file"])
        self.opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=self.context), NoRedirect())
        self.tid = {k: v["id"] for k, v in info["tenants"].items()}
        self.public = info["client_id"]
        self.no_device = info["clients"]["public_no_device"]["client_id"]
        self.confidential = info["clients"]["confidential"]["client_id"]
        self.secret = info["clients"]["confidential"]["client_secret"]
        secrets_seen.add(self.secret)
        self.jwks = None

    def call(self, method, path, form=None, headers=None, body=None):
        url = path if path.startswith("https://") else self.base + path
        data = body
        headers = dict(headers or {})
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with self.opener.open(request, timeout=15) as response:
                return Answer(response.status, response.headers, response.read())
        except urllib.error.HTTPError as error:
            return Answer(error.code, error.headers, error.read())

    def control(self, body):
        answer = self.call("POST", "/_test/control", body=json.dumps(body).encode(),
                           headers={"Content-Type": "application/json"})
        check(answer.status == 200, "control %s" % ",".join(sorted(body)), answer.text())
        return answer.json()["state"]

    # Authorization endpoint.

    def authorize(self, tenant, scope="openid profile offline_access User.Read User.ReadBasic.All", user=None,
                  deny=False, client=None, redirect="http://localhost:53682/", session=None, **extra):
        verifier, challenge = pkce()
        state = secrets.token_urlsafe(12)
        params = {"client_id": client or self.public, "response_type": "code", "redirect_uri": redirect,
                  "scope": scope, "state": state, "code_challenge": challenge, "code_challenge_method": "S256"}
        params.update(extra)
        params = {k: v for k, v in params.items() if v is not None}
        cookies = []
        if user:
            cookies.append("standin_user=" + urllib.parse.quote(user))
        if deny:
            cookies.append("standin_consent=deny")
        if session:
            cookies.append("standin_session=" + urllib.parse.quote(session))
        answer = self.call("GET", "/%s/oauth2/v2.0/authorize?%s" % (tenant, urllib.parse.urlencode(params)),
                           headers={"Cookie": "; ".join(cookies)} if cookies else None)
        result = {"status": answer.status, "verifier": verifier, "state": state, "redirect": redirect,
                  "answer": answer}
        if answer.status == 302:
            location = answer.headers["Location"]
            result["location"] = location
            result["params"] = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
            if "code" in result["params"]:
                secrets_seen.add(result["params"]["code"])
        return result

    def token(self, tenant, form, basic=None, headers=None):
        headers = dict(headers or {})
        if basic:
            headers["Authorization"] = "Basic " + base64.b64encode(
                ("%s:%s" % (urllib.parse.quote(basic[0], safe=""), urllib.parse.quote(basic[1], safe="")))
                .encode()).decode()
        return self.call("POST", "/%s/oauth2/v2.0/token" % tenant, form=form, headers=headers)

    def redeem(self, tenant, auth, scope=None, client=None):
        form = {"grant_type": "authorization_code", "client_id": client or self.public,
                "code": auth["params"]["code"], "redirect_uri": auth["redirect"], "code_verifier": auth["verifier"]}
        if scope:
            form["scope"] = scope
        return self.token(tenant, form)

    def sign_in(self, tenant, what, **kwargs):
        auth = self.authorize(tenant, **kwargs)
        check(auth["status"] == 302 and "code" in auth.get("params", {}), "%s: authorize gives a code" % what,
              auth.get("params") or auth["answer"].text())
        check(auth["params"].get("state") == auth["state"], "%s: state comes back" % what)
        answer = self.redeem(tenant, auth)
        check(answer.status == 200, "%s: the code is redeemed" % what, answer.text())
        return answer.json()

    def refresh(self, tenant, refresh_token, scope=None, claims=None, client=None):
        form = {"grant_type": "refresh_token", "client_id": client or self.public, "refresh_token": refresh_token}
        if scope:
            form["scope"] = scope
        if claims:
            form["claims"] = json.dumps(claims)
        return self.token(tenant, form)

    def graph(self, path, token, method="GET", headers=None):
        headers = dict(headers or {})
        if token:
            headers["Authorization"] = "Bearer " + token
        return self.call(method, path, headers=headers, body=b"" if method == "POST" else None)

    def verify(self, jwt):
        """RS256 with the published key."""
        if self.jwks is None:
            self.jwks = self.call("GET", "/common/discovery/v2.0/keys").json()["keys"]
        header_b64, payload_b64, signature_b64 = jwt.split(".")
        header = json.loads(unb64(header_b64))
        key = next(k for k in self.jwks if k["kid"] == header["kid"])
        n, e = int.from_bytes(unb64(key["n"]), "big"), int.from_bytes(unb64(key["e"]), "big")
        size = (n.bit_length() + 7) // 8
        em = pow(int.from_bytes(unb64(signature_b64), "big"), e, n).to_bytes(size, "big")
        digest = bytes.fromhex("3031300d060960864801650304020105000420") + hashlib.sha256(
            (header_b64 + "." + payload_b64).encode()).digest()
        return header["alg"] == "RS256" and em == b"\x00\x01" + b"\xff" * (size - len(digest) - 3) + b"\x00" + digest


def sts_error(answer, error, code, status=400):
    try:
        body = answer.json()
    except ValueError:
        return False
    description = body.get("error_description", "")
    return (answer.status == status and body.get("error") == error and body.get("error_codes") == [code]
            and description.startswith("AADSTS%d: " % code) and "\r\nTrace ID: " in description
            and "\r\nCorrelation ID: " in description and "\r\nTimestamp: " in description
            and body.get("trace_id") and body.get("correlation_id") and body.get("timestamp", "").endswith("Z")
            and body.get("error_uri", "").endswith("/error?code=%d" % code))


def graph_error(answer, status, code):
    try:
        body = answer.json()
    except ValueError:
        return False
    inner = body.get("error", {}).get("innerError", {})
    return (answer.status == status and body["error"].get("code") == code and body["error"].get("message")
            and inner.get("date") and inner.get("request-id") and inner.get("client-request-id"))


def redirect_error(auth, error, code):
    params = auth.get("params", {})
    return (auth["status"] == 302 and params.get("error") == error
            and params.get("error_description", "").startswith("AADSTS%d: " % code)
            and params.get("state") == auth["state"] and "code" not in params)


def check_redirect_errors(s, cases):
    """Each case: (tenant, authorize's keywords, the error the redirect carries, its AADSTS code, what is checked)."""
    for tenant, keywords, error, code, label in cases:
        check(redirect_error(s.authorize(tenant, **keywords), error, code), label)


# --- the checks --------------------------------------------------------------------------


def check_transport(s):
    info = s.info
    check(info["base_url"].startswith("https://127.0.0.1:") and info["host"] == "127.0.0.1:%d" % info["port"],
          "info: https base_url and host")
    check(os.path.isabs(info["ca_file"]) and os.path.exists(info["ca_file"]), "info: ca_file")
    for key in ("tenants", "client_id", "clients", "users", "pid", "control_url", "requests_log", "authorize_log"):
        check(key in info, "info: %s" % key)
    # The certificate names localhost too.
    context = ssl.create_default_context(cafile=info["ca_file"])
    with socket.create_connection(("127.0.0.1", info["port"]), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            check(tls.version() is not None, "TLS: the certificate is valid for localhost")
    # Another CA's trust store refuses it.
    try:
        with socket.create_connection(("127.0.0.1", info["port"]), timeout=5) as raw:
            with ssl.create_default_context().wrap_socket(raw, server_hostname="127.0.0.1"):
                refused = False
    except ssl.SSLError:
        refused = True
    check(refused, "TLS: the system trust store does not trust the stand-in")
    # Plain HTTP gets no answer.
    with socket.create_connection(("127.0.0.1", info["port"]), timeout=5) as raw:
        raw.sendall(b"GET /common/v2.0/.well-known/openid-configuration HTTP/1.1\r\nHost: x\r\n\r\n")
        try:
            data = raw.recv(100)
        except OSError:
            data = b""
    check(not data.startswith(b"HTTP/1.1 200"), "transport: HTTPS only")


def check_discovery(s):
    config = s.call("GET", "/common/v2.0/.well-known/openid-configuration").json()
    check(config["issuer"] == "https://%s/{tenantid}/v2.0" % s.host, "discovery: common issuer has {tenantid}",
          config["issuer"])
    check(config["token_endpoint"] == "https://%s/common/oauth2/v2.0/token" % s.host
          and config["authorization_endpoint"] == "https://%s/common/oauth2/v2.0/authorize" % s.host
          and config["device_authorization_endpoint"] == "https://%s/common/oauth2/v2.0/devicecode" % s.host
          and config["jwks_uri"] == "https://%s/common/discovery/v2.0/keys" % s.host
          and config["userinfo_endpoint"] == "https://%s/oidc/userinfo" % s.host, "discovery: common endpoints")
    config = s.call("GET", "/contoso.test/v2.0/.well-known/openid-configuration").json()
    check(config["issuer"] == "https://%s/%s/v2.0" % (s.host, s.tid["contoso"])
          and config["token_endpoint"] == "https://%s/%s/oauth2/v2.0/token" % (s.host, s.tid["contoso"]),
          "discovery: a domain resolves to its tenant id", config)
    config = s.call("GET", "/consumers/v2.0/.well-known/openid-configuration").json()
    check(config["issuer"] == "https://%s/%s/v2.0" % (s.host, CONSUMERS), "discovery: consumers issuer")
    check(sts_error(s.call("GET", "/nowhere.test/v2.0/.well-known/openid-configuration"), "invalid_tenant", 90002),
          "discovery: an unknown tenant is AADSTS90002")
    keys = s.call("GET", "/organizations/discovery/v2.0/keys").json()["keys"]
    check(len(keys) == 1 and keys[0]["kty"] == "RSA" and keys[0]["kid"] and keys[0]["e"] == "AQAB"
          and keys[0]["x5c"], "keys: one RSA key with kid and x5c")


def check_code_flow(s):
    tokens = s.sign_in("common", "common/ada", nonce="n-0S6", login_hint="ada@contoso.test")
    check(tokens["token_type"] == "Bearer" and tokens["expires_in"] == 3600 and tokens["ext_expires_in"] == 3600
          and {"access_token", "refresh_token", "id_token", "scope"} <= set(tokens), "token response shape", tokens)
    check(set(tokens["scope"].split()) == {"User.Read", "User.ReadBasic.All", "profile", "openid"},
          "token response scope", tokens["scope"])
    check(s.verify(tokens["id_token"]) and s.verify(tokens["access_token"]), "tokens are RS256-signed with the JWKS key")
    claims = payload(tokens["id_token"])
    check(claims["iss"] == "https://%s/%s/v2.0" % (s.host, s.tid["contoso"]) and claims["aud"] == s.public
          and claims["tid"] == s.tid["contoso"] and claims["oid"] == s.info["users"]["ada@contoso.test"]["oids"]["contoso"]
          and claims["preferred_username"] == "ada@contoso.test" and claims["name"] == "Ada Lovelace"
          and claims["ver"] == "2.0" and claims["nonce"] == "n-0S6" and claims["nbf"] <= claims["iat"] < claims["exp"]
          and claims["sub"] and "idp" not in claims, "ID token claims (member)", claims)
    access = payload(tokens["access_token"])
    check(access["aud"] == GRAPH_APP_ID and access["tid"] == s.tid["contoso"] and "User.Read" in access["scp"].split()
          and access["idtyp"] == "user" and "xms_cc" not in access, "access token claims", access)
    me = s.graph("/v1.0/me", tokens["access_token"]).json()
    check(me["id"] == claims["oid"] and me["userPrincipalName"] == "ada@contoso.test" and "userType" not in me
          and me["@odata.context"].endswith("$metadata#users/$entity"), "Graph /me (member)", me)
    userinfo = s.graph("/oidc/userinfo", tokens["access_token"]).json()
    check(userinfo["sub"] == claims["sub"] and userinfo["name"] == "Ada Lovelace" and "email" not in userinfo,
          "userinfo: sub as in the ID token, names with profile")
    # Another app would see another sub (pairwise), the same oid.
    auth = s.authorize("common", user="ada@contoso.test")
    check(payload(s.redeem("common", auth).json()["id_token"])["sub"] == claims["sub"], "sub is stable per app")

    # Reuse, PKCE, wrong tenant, wrong redirect at redemption.
    auth = s.authorize("common")
    check(s.redeem("common", auth).status == 200, "a code redeems once")
    check(sts_error(s.redeem("common", auth), "invalid_grant", 54005), "a redeemed code: AADSTS54005 (error shape)")
    auth = s.authorize("common")
    auth_bad = dict(auth, verifier="x" * 43)
    check(sts_error(s.redeem("common", auth_bad), "invalid_grant", 501481), "PKCE: a wrong verifier is AADSTS501481")
    check(sts_error(s.redeem("common", auth), "invalid_grant", 54005), "PKCE: the code was used up by the attempt")
    auth = s.authorize("common")
    check(sts_error(s.redeem("fabrikam.test", auth), "invalid_grant", 700005),
          "a code redeemed at another tenant: AADSTS700005")
    auth = s.authorize("common")
    check(sts_error(s.redeem("common", dict(auth, redirect="http://localhost:1/")), "invalid_grant", 500112),
          "redemption with another redirect_uri is refused")
    auth = s.authorize("common", redirect="http://localhost:40000/")
    answer = s.token("common", {"grant_type": "authorization_code", "client_id": s.public, "code": auth["params"]["code"],
                                "redirect_uri": auth["redirect"], "code_verifier": auth["verifier"],
                                "client_secret": "nope"})
    check(sts_error(answer, "invalid_client", 700025, 401), "a public client presenting a secret: AADSTS700025")

    # Redirect URIs: localhost's port is ignored, the path and host are not.
    check(s.authorize("common", redirect="http://localhost:1234")["location"].startswith("http://localhost:1234/?code="),
          "redirect: any localhost port, a trailing slash added")
    for redirect in ("http://127.0.0.1:1234/", "http://localhost:1234/callback", "https://localhost:1234/",
                     "http://evil.example/"):
        auth = s.authorize("common", redirect=redirect)
        check(auth["status"] == 400 and "AADSTS50011" in auth["answer"].text() and "location" not in auth,
              "redirect: %s is shown an error page, not redirected to" % redirect)
    auth = s.authorize("common", client="00000000-1111-2222-3333-444444444444")
    check(auth["status"] == 400 and "AADSTS700016" in auth["answer"].text(), "an unknown client: AADSTS700016 page")
    auth = s.authorize("nowhere.test")
    check(auth["status"] == 400 and "AADSTS90002" in auth["answer"].text(), "an unknown tenant: AADSTS90002 page")
    check_redirect_errors(s, [
        ("common", {"scope": "openid api://other/read"}, "invalid_resource", 500011,
         "an unknown resource: invalid_resource AADSTS500011"),
        ("common", {"scope": "openid Bogus.Permission"}, "invalid_scope", 70011,
         "an unknown permission: invalid_scope AADSTS70011"),
        ("common", {"response_type": "token"}, "unsupported_response_type", 70005,
         "response_type other than code is refused"),
        ("common", {"code_challenge": "short"}, "invalid_request", 501491, "a malformed code_challenge: AADSTS501491"),
        ("common", {"deny": True}, "access_denied", 65004, "the user declines: access_denied AADSTS65004"),
    ])
    # Without offline_access no refresh token; without openid no ID token.
    tokens = s.sign_in("common", "no offline_access", scope="openid User.Read")
    check("refresh_token" not in tokens and "id_token" in tokens, "no refresh token without offline_access")
    tokens = s.sign_in("common", "no openid", scope="offline_access User.Read")
    check("id_token" not in tokens and "refresh_token" in tokens, "no ID token without openid")
    # response_mode=form_post.
    auth = s.authorize("common", response_mode="form_post")
    check(auth["status"] == 200 and b'name="code"' in auth["answer"].body and b"hiddenform" in auth["answer"].body,
          "response_mode=form_post gives the auto-submitting form")


def check_tenants(s):
    users = s.info["users"]
    tokens = s.sign_in("fabrikam.test", "fabrikam/ada (guest)", login_hint="ada@contoso.test")
    claims = payload(tokens["id_token"])
    guest_oid = users["ada@contoso.test"]["oids"]["fabrikam"]
    check(claims["tid"] == s.tid["fabrikam"] and claims["oid"] == guest_oid
          and claims["iss"] == "https://%s/%s/v2.0" % (s.host, s.tid["fabrikam"])
          and claims["preferred_username"] == "ada@contoso.test" and claims["name"] == "Ada Lovelace"
          and claims["idp"] == "https://%s/%s/v2.0" % (s.host, s.tid["contoso"])
          and guest_oid != users["ada@contoso.test"]["oids"]["contoso"], "ID token claims (guest)", claims)
    me = s.graph("/v1.0/me?$select=id,userType,userPrincipalName,mail", tokens["access_token"]).json()
    check(me["id"] == guest_oid and me["userType"] == "Guest" and "#EXT#" in me["userPrincipalName"]
          and me["mail"] == "ada@contoso.test", "Graph /me is the guest object in fabrikam", me)
    tokens = s.sign_in(s.tid["contoso"], "contoso id/bob (member)", user="bob@contoso.test")
    claims = payload(tokens["id_token"])
    check(claims["tid"] == s.tid["contoso"] and claims["oid"] == users["bob@contoso.test"]["oids"]["contoso"],
          "a tenant id signs a member in as member")
    tokens = s.sign_in("common", "common/carol", login_hint="carol@fabrikam.test")
    check(payload(tokens["id_token"])["tid"] == s.tid["fabrikam"], "common signs in at the home tenant")
    tokens = s.sign_in("consumers", "consumers/dan", login_hint="dan@outlook.test")
    claims = payload(tokens["id_token"])
    check(claims["tid"] == CONSUMERS and claims["oid"] == users["dan@outlook.test"]["oids"]["consumers"]
          and claims["iss"] == "https://%s/%s/v2.0" % (s.host, CONSUMERS), "consumers signs a personal account in")
    tokens = s.sign_in("common", "common/dan", login_hint="dan@outlook.test")
    check(payload(tokens["id_token"])["tid"] == CONSUMERS, "common signs a personal account in at consumers")
    tokens = s.sign_in("organizations", "organizations/bob", login_hint="bob@contoso.test")
    check(payload(tokens["id_token"])["tid"] == s.tid["contoso"], "organizations signs a work account in")
    check_redirect_errors(s, [
        ("organizations", {"login_hint": "dan@outlook.test"}, "access_denied", 500208,
         "organizations refuses a personal account (AADSTS500208)"),
        ("consumers", {"login_hint": "ada@contoso.test"}, "access_denied", 500208,
         "consumers refuses a work account (AADSTS500208)"),
        ("fabrikam.test", {"login_hint": "bob@contoso.test"}, "access_denied", 50020,
         "a tenant refuses a user who is not in it (AADSTS50020)"),
        ("common", {"login_hint": "nobody@contoso.test"}, "access_denied", 50034, "an unknown account: AADSTS50034"),
    ])
    # The person at the keyboard (the browser's session) wins over the hint.
    auth = s.authorize("common", user="bob@contoso.test", login_hint="ada@contoso.test")
    check(payload(s.redeem("common", auth).json()["id_token"])["preferred_username"] == "bob@contoso.test",
          "the browser's user wins over login_hint")
    # Without either, the default user, settable.
    s.control({"set": {"default_user": "carol@fabrikam.test"}})
    auth = s.authorize("common")
    check(payload(s.redeem("common", auth).json()["id_token"])["preferred_username"] == "carol@fabrikam.test",
          "without a hint the default user signs in")
    s.control({"set": {"default_user": "ada@contoso.test"}})
    # authorize.log keeps the query.
    claims_request = {"access_token": {"xms_cc": {"values": ["cp1"]}}}
    s.authorize("common", prompt="select_account", login_hint="bob@contoso.test", claims=json.dumps(claims_request))
    with open(s.info["authorize_log"]) as handle:
        last = json.loads(handle.read().splitlines()[-1])
    check(last["query"]["login_hint"] == "bob@contoso.test" and last["query"]["prompt"] == "select_account"
          and json.loads(last["query"]["claims"]) == claims_request and "User.Read" in last["query"]["scope"]
          and last["outcome"]["user"] == "bob@contoso.test" and last["outcome"]["tid"] == s.tid["contoso"],
          "authorize.log records login_hint, prompt, claims, scope and the outcome", last)


def check_refresh(s):
    users = s.info["users"]
    tokens = s.sign_in("common", "refresh: sign in", user="ada@contoso.test")
    first = tokens["refresh_token"]
    answer = s.refresh("fabrikam.test", first)
    check(answer.status == 200, "a refresh token works at another tenant", answer.text())
    other = answer.json()
    claims, access = payload(other["id_token"]), payload(other["access_token"])
    check(claims["tid"] == s.tid["fabrikam"] and claims["oid"] == users["ada@contoso.test"]["oids"]["fabrikam"]
          and access["tid"] == s.tid["fabrikam"], "... and gives that tenant's tokens (the guest object)", claims)
    check(s.graph("/v1.0/me", other["access_token"]).json()["id"] == claims["oid"], "... which Graph takes as the guest")
    check(other["refresh_token"] != first, "a refresh returns a new refresh token")
    answer = s.refresh("common", first)
    check(answer.status == 200 and payload(answer.json()["id_token"])["tid"] == s.tid["contoso"],
          "the old refresh token stays valid (not revoked on use)")
    check(s.refresh(s.tid["contoso"], other["refresh_token"]).status == 200, "the new one works too")
    bob = s.sign_in("common", "refresh: bob", user="bob@contoso.test")["refresh_token"]
    check(sts_error(s.refresh("fabrikam.test", bob), "invalid_grant", 50020),
          "a refresh at a tenant the user is not in: AADSTS50020")
    check(sts_error(s.refresh("consumers", first), "invalid_grant", 500208), "a work account's refresh at consumers")
    check(sts_error(s.refresh("common", "0.ASnot-a-token"), "invalid_grant", 9002313), "an unknown refresh token")
    answer = s.refresh("common", first, client=s.no_device)
    check(sts_error(answer, "invalid_grant", 70000), "a refresh token of another client is refused")
    # Per-call scopes and consent.
    answer = s.refresh("common", first, scope="openid offline_access Mail.Read")
    body = answer.json()
    check(sts_error(answer, "invalid_grant", 65001) and body.get("suberror") == "consent_required",
          "a refresh asking for a permission not consented: AADSTS65001 consent_required", body)
    answer = s.refresh("common", first, scope="https://graph.microsoft.com/.default openid")
    check(answer.status == 200 and set(answer.json()["scope"].split()) >= {"User.Read", "User.ReadBasic.All"},
          ".default is the consented set", answer.text())
    answer = s.refresh("common", first, scope="User.Read offline_access")
    check(answer.status == 200 and payload(answer.json()["access_token"])["scp"] == "User.Read"
          and "id_token" not in answer.json(), "a per-call scope token carries only that scope")
    s.control({"set": {"consented": {"contoso": ["User.Read", "User.ReadBasic.All", "Mail.Read"]}}})
    answer = s.refresh("common", first, scope="Mail.Read")
    check(answer.status == 200 and "Mail.Read" in answer.json()["scope"], "consented permissions are configurable")
    s.control({"set": {"consented": {"contoso": ["User.Read", "User.ReadBasic.All"]}}})
    # Interactive consent adds the permissions asked for.
    tokens = s.sign_in("common", "consent to Calendars.Read", scope="openid offline_access User.Read Calendars.Read")
    check(s.refresh("common", tokens["refresh_token"], scope="Calendars.Read").status == 200,
          "a permission consented interactively can be asked for later")
    check_redirect_errors(s, [
        ("common", {"scope": "openid User.Read.All"}, "access_denied", 90094,
         "an admin-only permission needs the tenant's consent (AADSTS90094)"),
        ("common", {"scope": "openid Files.Read", "prompt": "none", "session": "ada@contoso.test"},
         "consent_required", 65001, "prompt=none needing consent: consent_required"),
        ("common", {"prompt": "none"}, "login_required", 50058,
         "prompt=none with no one signed in to the browser: login_required"),
    ])


def check_faults(s):
    tokens = s.sign_in("common", "faults: sign in")
    refresh = tokens["refresh_token"]
    cases = [
        ("interaction_required", 400, "interaction_required", 50076, None),
        ("consent_required", 400, "invalid_grant", 65001, "consent_required"),
        ("login_required", 400, "invalid_grant", 50058, None),
        ("temporarily_unavailable", 503, "temporarily_unavailable", 90006, None),
        ("throttled", 429, "temporarily_unavailable", 90055, None),
        ("server_error", 500, "server_error", 50000, None),
    ]
    for kind, status, error, code, suberror in cases:
        s.control({"next_token_errors": {"refresh_token": [{"kind": kind}]}})
        answer = s.refresh("common", refresh)
        check(sts_error(answer, error, code, status) and answer.json().get("suberror") == suberror,
              "token fault %s: %d %s AADSTS%d" % (kind, status, error, code), answer.text())
        check(s.refresh("common", refresh).status == 200, "token fault %s is used once" % kind)
    s.control({"next_token_errors": {"refresh_token": [{"kind": "temporarily_unavailable", "retry_after": 7,
                                                         "repeat": 3}]}})
    for attempt in range(3):
        answer = s.refresh("common", refresh)
        check(answer.status == 503 and answer.headers.get("Retry-After") == "7",
              "503 with Retry-After: 7, attempt %d of 3" % (attempt + 1))
    check(s.refresh("common", refresh).status == 200, "... then the service is back")
    s.control({"next_token_errors": {"refresh_token": [{"kind": "throttled", "retry_after": 4}]}})
    answer = s.refresh("common", refresh)
    check(answer.status == 429 and answer.headers.get("Retry-After") == "4", "429 with Retry-After")
    # Per grant type: a fault queued for the code grant leaves refreshes alone.
    s.control({"next_token_errors": {"authorization_code": ["interaction_required"]}})
    check(s.refresh("common", refresh).status == 200, "a fault queued for another grant type is not used")
    auth = s.authorize("common")
    check(sts_error(s.redeem("common", auth), "interaction_required", 50076), "... it is used by that grant")
    s.control({"next_token_errors": [{"kind": "interaction_required",
                                      "claims": "{\"access_token\":{\"capolids\":{\"essential\":true}}}"}]})
    answer = s.refresh("common", refresh)
    check(sts_error(answer, "interaction_required", 50076) and "capolids" in answer.json().get("claims", ""),
          "a fault can carry claims")
    # expired and revoked leave the presented refresh token dead.
    other = s.refresh("common", refresh).json()["refresh_token"]
    s.control({"next_token_errors": {"refresh_token": ["expired"]}})
    check(sts_error(s.refresh("common", refresh), "invalid_grant", 70008), "fault expired: AADSTS70008")
    check(sts_error(s.refresh("common", refresh), "invalid_grant", 70008), "... and that refresh token stays expired")
    s.control({"next_token_errors": {"refresh_token": ["revoked"]}})
    check(sts_error(s.refresh("common", other), "invalid_grant", 50173), "fault revoked: AADSTS50173")
    check(sts_error(s.refresh("common", other), "invalid_grant", 50173), "... and that refresh token stays revoked")
    # Authorize faults.
    for kind, error, code in (("interaction_required", "interaction_required", 50076),
                              ("login_required", "login_required", 50058),
                              ("consent_required", "consent_required", 65001),
                              ("access_denied", "access_denied", 65004)):
        s.control({"next_authorize_errors": [{"kind": kind}]})
        check(redirect_error(s.authorize("common", prompt="none"), error, code),
              "authorize fault %s: error=%s AADSTS%d" % (kind, error, code))
    check(s.authorize("common", prompt="none", session="ada@contoso.test")["params"].get("code"),
          "prompt=none signs the session's user in")
    state = s.control({"next_graph_errors": ["throttled"], "reset": True})
    check(state["next_graph_errors"] == [{"kind": "throttled"}], "reset clears, then new faults queue")
    s.control({"reset": True})
    bad = s.call("POST", "/_test/control", body=b'{"next_token_errors": [{"kind": "nope"}]}')
    check(bad.status == 400, "the control API refuses an unknown fault")


def check_device(s):
    s.control({"set": {"device_interval": 1}})
    answer = s.call("POST", "/organizations/oauth2/v2.0/devicecode",
                    form={"client_id": s.public, "scope": "openid profile offline_access User.Read"})
    body = answer.json()
    check(answer.status == 200 and {"user_code", "device_code", "verification_uri", "expires_in", "interval",
                                    "message"} <= set(body) and "verification_uri_complete" not in body
          and body["verification_uri"] == "https://%s/devicelogin" % s.host and body["expires_in"] == 900
          and body["interval"] == 1, "devicecode response", body)
    check(body["message"] == "To sign in, use a web browser to open the page %s and enter the code %s to "
                             "authenticate." % (body["verification_uri"], body["user_code"]), "devicecode message")
    poll = {"grant_type": DEVICE_GRANT, "client_id": s.public, "device_code": body["device_code"]}
    check(sts_error(s.token("organizations", poll), "authorization_pending", 70016), "poll: authorization_pending")
    answer = s.token("organizations", poll)
    check(answer.status == 400 and answer.json()["error"] == "slow_down", "poll: too soon is slow_down")
    # A personal account cannot approve at organizations: the page says so, the flow stays pending.
    environment = dict(os.environ, MICROSOFT_STANDIN_CA=s.info["ca_file"], MICROSOFT_STANDIN_USER="dan@outlook.test")
    run = subprocess.run([BROWSER, "--device", body["verification_uri"], body["user_code"]], env=environment,
                         capture_output=True, text=True, timeout=60)
    check(run.returncode == 1 and "AADSTS500208" in run.stderr, "device: a refused user sees AADSTS500208",
          run.stderr)
    time.sleep(1.1)
    check(sts_error(s.token("organizations", poll), "authorization_pending", 70016), "... and the flow stays pending")
    environment["MICROSOFT_STANDIN_USER"] = "bob@contoso.test"
    run = subprocess.run([BROWSER, "--device", body["verification_uri"], body["user_code"]], env=environment,
                         capture_output=True, text=True, timeout=60)
    check(run.returncode == 0, "microsoft-browser.py --device approves", run.stderr)
    time.sleep(1.1)
    answer = s.token("organizations", poll)
    check(answer.status == 200 and payload(answer.json()["id_token"])["preferred_username"] == "bob@contoso.test"
          and "refresh_token" in answer.json(), "device grant: tokens for the approving user", answer.text())
    time.sleep(1.1)
    check(sts_error(s.token("organizations", poll), "bad_verification_code", 70018), "a redeemed device code is gone")
    run = subprocess.run([BROWSER, "--device", body["verification_uri"], body["user_code"]], env=environment,
                         capture_output=True, text=True, timeout=60)
    check(run.returncode == 1 and "AADSTS90120" in run.stderr, "its user code was already used (AADSTS90120)",
          run.stderr)
    # Decline.
    body = s.call("POST", "/common/oauth2/v2.0/devicecode", form={"client_id": s.public, "scope": "openid"}).json()
    environment["MICROSOFT_STANDIN_ACTION"] = "deny"
    run = subprocess.run([BROWSER, "--device", body["verification_uri"], body["user_code"]], env=environment,
                         capture_output=True, text=True, timeout=60)
    check(run.returncode == 0, "microsoft-browser.py --device declines", run.stderr)
    poll = {"grant_type": DEVICE_GRANT, "client_id": s.public, "device_code": body["device_code"]}
    check(sts_error(s.token("common", poll), "authorization_declined", 65004), "poll after decline: "
                                                                              "authorization_declined")
    answer = s.call("GET", "/devicelogin?" + urllib.parse.urlencode({"user_code": body["user_code"],
                                                                      "decision": "allow"}))
    check(answer.status == 400 and "AADSTS90120" in answer.text(), "a decided request cannot be decided again")
    check(sts_error(s.token("common", dict(poll, device_code="DAQABnot-a-code")), "bad_verification_code", 70018),
          "an unknown device code: bad_verification_code")
    # Expiry.
    s.control({"set": {"device_expires_in": 1}})
    body = s.call("POST", "/common/oauth2/v2.0/devicecode", form={"client_id": s.public, "scope": "openid"}).json()
    time.sleep(1.2)
    check(sts_error(s.token("common", {"grant_type": DEVICE_GRANT, "client_id": s.public,
                                       "device_code": body["device_code"]}), "expired_token", 70019),
          "poll after expires_in: expired_token")
    s.control({"set": {"device_expires_in": 900}})
    # An app whose public client flows are off.
    body = s.call("POST", "/common/oauth2/v2.0/devicecode", form={"client_id": s.no_device, "scope": "openid"}).json()
    answer = s.token("common", {"grant_type": DEVICE_GRANT, "client_id": s.no_device,
                                "device_code": body["device_code"]})
    check(sts_error(answer, "invalid_client", 7000218, 401) and "'client_assertion' or 'client_secret'" in
          answer.json()["error_description"], "device grant without public client flows: AADSTS7000218")
    check(sts_error(s.call("POST", "/common/oauth2/v2.0/devicecode", form={"client_id": s.public}),
                    "invalid_request", 900144), "devicecode without scope: AADSTS900144")
    s.control({"set": {"device_interval": 5}})


def check_client_credentials(s):
    form = {"grant_type": "client_credentials", "client_id": s.confidential, "client_secret": s.secret,
            "scope": "https://graph.microsoft.com/.default"}
    for tenant in ("common", "organizations"):
        check(sts_error(s.token(tenant, form), "invalid_request", 50059),
              "client credentials at %s: AADSTS50059" % tenant)
    check(sts_error(s.token("contoso.test", dict(form, scope="User.Read")), "invalid_scope", 1002012),
          "client credentials without /.default: invalid_scope AADSTS1002012")
    check(sts_error(s.token("contoso.test", dict(form, scope="api://other/.default")), "invalid_resource", 500011),
          "client credentials for an unknown resource: AADSTS500011")
    without = {k: v for k, v in form.items() if k != "client_secret"}
    check(sts_error(s.token("contoso.test", without), "invalid_client", 7000218, 401),
          "client credentials without a secret: AADSTS7000218")
    check(sts_error(s.token("contoso.test", dict(form, client_secret="wrong")), "invalid_client", 7000215, 401),
          "client credentials with a wrong secret: AADSTS7000215")
    check(sts_error(s.token("contoso.test", dict(form, client_id=s.public, client_secret="x")), "invalid_client",
                    700025, 401), "a public client cannot use a secret")
    answer = s.token("contoso.test", form)
    body = answer.json()
    check(answer.status == 200 and body["token_type"] == "Bearer" and "refresh_token" not in body
          and "id_token" not in body and body["expires_in"] == 3600, "client credentials (client_secret_post)", body)
    claims = payload(body["access_token"])
    check(claims["tid"] == s.tid["contoso"] and claims["idtyp"] == "app" and claims["roles"] == ["User.Read.All"]
          and "scp" not in claims and claims["appid"] == s.confidential, "app-only token claims", claims)
    basic = {k: v for k, v in form.items() if k not in ("client_id", "client_secret")}
    answer = s.token(s.tid["fabrikam"], basic, basic=(s.confidential, s.secret))
    check(answer.status == 200 and payload(answer.json()["access_token"])["tid"] == s.tid["fabrikam"],
          "client credentials (client_secret_basic) at a tenant id")
    check(graph_error(s.graph("/v1.0/me", body["access_token"]), 400, "BadRequest"), "Graph /me with an app token: 400")
    users = s.graph("/v1.0/users?$top=5", body["access_token"]).json()
    check(len(users["value"]) == 5 and "@odata.nextLink" in users, "Graph /users with an app token (User.Read.All)")


def check_graph(s):
    answer = s.graph("/v1.0/me", None, headers={"client-request-id": "c0ffee00-0000-4000-8000-000000000001"})
    check(graph_error(answer, 401, "InvalidAuthenticationToken")
          and answer.headers.get("WWW-Authenticate") == 'Bearer realm="", authorization_uri="https://%s/common/oauth2/'
                                                        'authorize", client_id="%s"' % (s.host, GRAPH_APP_ID)
          and answer.json()["error"]["innerError"]["client-request-id"] == "c0ffee00-0000-4000-8000-000000000001",
          "Graph: no token is 401 InvalidAuthenticationToken with Graph's challenge", answer.text())
    check(graph_error(s.graph("/v1.0/me", "eyJ.not.a-token"), 401, "InvalidAuthenticationToken"),
          "Graph: an unknown token is 401")
    tokens = s.sign_in("common", "graph: ada", scope="openid profile email offline_access User.Read "
                                                    "User.ReadBasic.All")
    token = tokens["access_token"]
    # Paging.
    url, seen, pages = "/v1.0/users?$filter=startswith(displayName,'Ad')&$top=2", [], 0
    while url:
        page = s.graph(url, token).json()
        seen += [u["displayName"] for u in page["value"]]
        pages += 1
        url = page.get("@odata.nextLink")
        if url:
            check(url.startswith("https://%s/v1.0/users?" % s.host) and "$skiptoken=" in url,
                  "Graph: @odata.nextLink on the same host, with $skiptoken (page %d)" % pages)
    check(sorted(seen) == ["Ada Lovelace", "Adalyn Reyes", "Adam Smith", "Adelaide Byron", "Adele Vance",
                           "Adrian Ford"] and pages == 3, "Graph: users paged 2 at a time", seen)
    page = s.graph("/v1.0/users?$filter=startswith(givenName,'conan')&$select=displayName,userType", token).json()
    check(page["value"] == [{"displayName": "Conan O'Brien", "userType": "Member"}], "Graph: $filter and $select", page)
    check(graph_error(s.graph("/v1.0/users?$top=1000", token), 400, "Request_BadRequest"), "Graph: $top over 999")
    user = s.graph("/v1.0/users/bob@contoso.test", token).json()
    check(user["userPrincipalName"] == "bob@contoso.test", "Graph: a user by UPN")
    check(s.graph("/v1.0/users/" + user["id"], token).json()["id"] == user["id"], "Graph: a user by id")
    check(graph_error(s.graph("/v1.0/users/nobody@contoso.test", token), 404, "Request_ResourceNotFound"),
          "Graph: an unknown user is 404")
    userinfo = s.graph("/oidc/userinfo", token, method="POST").json()
    check(userinfo.get("email") == "ada@contoso.test", "userinfo (POST) with the email scope")
    # Without User.ReadBasic.All.
    narrow = s.sign_in("common", "graph: User.Read only", scope="openid offline_access User.Read")
    check(graph_error(s.graph("/v1.0/users?$top=3", narrow["access_token"]), 403, "Authorization_RequestDenied"),
          "Graph: listing users without User.ReadBasic.All is 403")
    check(s.graph("/v1.0/me", narrow["access_token"]).status == 200, "... /me needs only User.Read")
    no_openid = s.sign_in("common", "no openid", scope="offline_access User.Read")
    check(graph_error(s.graph("/oidc/userinfo", no_openid["access_token"]), 403, "Authorization_RequestDenied"),
          "userinfo needs openid")
    # Expiry and lifetime.
    s.control({"set": {"access_token_lifetime": 2}})
    short = s.sign_in("common", "short-lived token")
    check(short["expires_in"] == 2 and short["ext_expires_in"] == 2, "access-token lifetime is configurable")
    time.sleep(2.1)
    answer = s.graph("/v1.0/me", short["access_token"])
    check(graph_error(answer, 401, "InvalidAuthenticationToken") and "expired" in answer.json()["error"]["message"],
          "Graph: an expired token is 401")
    s.control({"set": {"access_token_lifetime": 3600}})
    fresh = s.sign_in("common", "token to expire")
    s.control({"expire_access_tokens": True})
    check(s.graph("/v1.0/me", fresh["access_token"]).status == 401, "expire_access_tokens expires them")
    # Throttling.
    token = s.refresh("common", tokens["refresh_token"]).json()["access_token"]
    s.control({"next_graph_errors": [{"kind": "throttled", "retry_after": 3}]})
    answer = s.graph("/v1.0/me", token)
    check(graph_error(answer, 429, "TooManyRequests") and answer.headers.get("Retry-After") == "3",
          "Graph: 429 TooManyRequests with Retry-After")
    check(s.graph("/v1.0/me", token).status == 200, "... once")
    s.control({"next_graph_errors": [{"kind": "unavailable", "retry_after": 1, "repeat": 2}]})
    check(s.graph("/v1.0/me", token).status == 503 and s.graph("/v1.0/me", token).status == 503
          and s.graph("/v1.0/me", token).status == 200, "Graph: 503 twice, then served")
    # revokeSignInSessions.
    answer = s.graph("/v1.0/me/revokeSignInSessions", token, method="POST")
    check(graph_error(answer, 403, "Authorization_RequestDenied"), "revokeSignInSessions without the permission: 403")
    check(s.refresh("common", tokens["refresh_token"]).status == 200, "... nothing was revoked")
    s.control({"set": {"consented": {"contoso": ["User.Read", "User.ReadBasic.All", "User.RevokeSessions.All"],
                                     "fabrikam": ["User.Read", "User.ReadBasic.All", "User.RevokeSessions.All"]}}})
    # The guest object in fabrikam: the API does not revoke external users' sessions.
    guest = s.refresh("fabrikam.test", tokens["refresh_token"], scope="User.RevokeSessions.All").json()
    answer = s.graph("/v1.0/me/revokeSignInSessions", guest["access_token"], method="POST")
    check(answer.status == 200 and answer.json()["value"] is True, "revokeSignInSessions for a guest answers true")
    check(s.refresh("common", tokens["refresh_token"]).status == 200, "... but revokes nothing (external user)")
    cae = s.sign_in("common", "CAE-capable token", claims=json.dumps({"access_token": {"xms_cc": {"values": ["cp1"]}}}))
    plain = s.refresh("common", tokens["refresh_token"]).json()["access_token"]
    allowed = s.refresh("common", tokens["refresh_token"], scope="User.RevokeSessions.All")
    check(allowed.status == 200 and payload(allowed.json()["access_token"])["scp"] == "User.RevokeSessions.All",
          "a per-call token with User.RevokeSessions.All")
    answer = s.graph("/v1.0/me/revokeSignInSessions", allowed.json()["access_token"], method="POST")
    check(answer.status == 200 and answer.json() == {"@odata.context": "https://%s/v1.0/$metadata#Edm.Boolean" % s.host,
                                                     "value": True}, "revokeSignInSessions with the permission",
          answer.text())
    check(sts_error(s.refresh("common", tokens["refresh_token"]), "invalid_grant", 50173),
          "after revocation a refresh is AADSTS50173")
    check(sts_error(s.refresh("fabrikam.test", cae["refresh_token"]), "invalid_grant", 50173),
          "... at every tenant, for every refresh token of the user")
    check(s.graph("/v1.0/me", plain).status == 200, "a token without cp1 stays valid until it expires")
    answer = s.graph("/v1.0/me", cae["access_token"])
    header = answer.headers.get("WWW-Authenticate", "")
    check(answer.status == 401 and 'error="insufficient_claims"' in header and "TokenIssuedBeforeRevocationTimestamp"
          in answer.json()["error"]["message"], "a CAE-capable token is refused with a claims challenge", header)
    check(s.sign_in("common", "sign in again after revocation")["access_token"], "signing in again works")
    s.control({"set": {"consented": {"contoso": ["User.Read", "User.ReadBasic.All"],
                                     "fabrikam": ["User.Read", "User.ReadBasic.All"]}}})


def parse_challenge(header):
    fields = {}
    for part in header[len("Bearer "):].split(", "):
        name, _, value = part.partition("=")
        fields[name.strip()] = value.strip().strip('"')
    return fields


def check_claims_challenge(s):
    capable = {"access_token": {"xms_cc": {"values": ["cp1"]}}}
    tokens = s.sign_in("common", "claims: cp1 client", user="bob@contoso.test", claims=json.dumps(capable))
    check(payload(tokens["access_token"]).get("xms_cc") == ["cp1"], "a client declaring cp1 gets xms_cc")
    s.control({"next_graph_errors": ["claims_challenge"]})
    answer = s.graph("/v1.0/me", tokens["access_token"])
    fields = parse_challenge(answer.headers.get("WWW-Authenticate", ""))
    check(answer.status == 401 and fields.get("error") == "insufficient_claims" and fields.get("realm") == ""
          and fields.get("authorization_uri") == "https://%s/common/oauth2/authorize" % s.host,
          "claims challenge: 401 with error=insufficient_claims", dict(answer.headers))
    challenge = json.loads(base64.b64decode(fields["claims"]))
    check(list(challenge) == ["access_token"] and challenge["access_token"]["nbf"]["essential"] is True
          and challenge["access_token"]["nbf"]["value"].isdigit(), "the claims are the CAE document's nbf request",
          challenge)
    check(s.graph("/v1.0/me", tokens["access_token"]).status == 401, "the old token stays refused")
    merged = {"access_token": dict(challenge["access_token"], xms_cc={"values": ["cp1"]})}
    answer = s.refresh("common", tokens["refresh_token"], claims=merged)
    check(answer.status == 200, "a refresh carrying the claims", answer.text())
    check(s.graph("/v1.0/me", answer.json()["access_token"]).status == 200, "... satisfies the challenge")
    with open(s.info["requests_log"]) as handle:
        lines = [json.loads(line) for line in handle]
    last_token = [line for line in lines if line["path"].endswith("/token")][-1]
    check(json.loads(last_token["fields"]["claims"]) == merged and last_token.get("cp1") is True,
          "requests.log shows the claims the refresh carried")
    # A client that did not declare cp1 gets no challenge, unless asked for any client.
    plain = s.sign_in("common", "claims: plain client", user="bob@contoso.test")
    s.control({"next_graph_errors": ["claims_challenge"]})
    check(s.graph("/v1.0/me", plain["access_token"]).status == 200, "no claims challenge for a client without cp1")
    s.control({"next_graph_errors": [{"kind": "claims_challenge", "any_client": True}]})
    answer = s.graph("/v1.0/me", plain["access_token"])
    check(answer.status == 401 and 'error="insufficient_claims"' in answer.headers.get("WWW-Authenticate", ""),
          "any_client: a challenge for any client")
    check(s.refresh("common", plain["refresh_token"]).status == 200, "... satisfied by a new token")
    s.control({"reset": True})


class Listener(http.server.BaseHTTPRequestHandler):
    received = []

    def do_GET(self):
        Listener.received.append(dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query)))
        body = b"<html><body>Signed in. You can close this window.</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def check_browser(s, log_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Listener)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        environment = dict(os.environ, MICROSOFT_STANDIN_CA=s.info["ca_file"], MICROSOFT_STANDIN_USER="carol@fabrikam.test",
                           MICROSOFT_STANDIN_FOREGROUND="1", MICROSOFT_STANDIN_LOG=log_path)
        verifier, challenge = pkce()
        params = {"client_id": s.public, "response_type": "code", "redirect_uri": "http://localhost:%d/" % port,
                  "scope": "openid profile offline_access User.Read", "state": "st-1", "code_challenge": challenge,
                  "code_challenge_method": "S256", "login_hint": "ada@contoso.test"}
        url = "%s/common/oauth2/v2.0/authorize?%s" % (s.base, urllib.parse.urlencode(params))
        run = subprocess.run([BROWSER, url], env=environment, capture_output=True, text=True, timeout=60)
        check(run.returncode == 0 and Listener.received and Listener.received[-1].get("state") == "st-1",
              "microsoft-browser.py delivers the redirect to the loopback listener", run.stderr)
        code = Listener.received[-1]["code"]
        secrets_seen.add(code)
        answer = s.token("common", {"grant_type": "authorization_code", "client_id": s.public, "code": code,
                                    "redirect_uri": params["redirect_uri"], "code_verifier": verifier})
        check(answer.status == 200 and payload(answer.json()["id_token"])["preferred_username"] == "carol@fabrikam.test",
              "MICROSOFT_STANDIN_USER signs in (over the login_hint)")
        # Detached: returns at once, delivers soon after.
        environment.pop("MICROSOFT_STANDIN_FOREGROUND")
        environment.pop("MICROSOFT_STANDIN_USER")
        count = len(Listener.received)
        params["state"] = "st-2"
        started = time.monotonic()
        run = subprocess.run([BROWSER, "%s/common/oauth2/v2.0/authorize?%s" % (s.base, urllib.parse.urlencode(params))],
                             env=environment, capture_output=True, text=True, timeout=60)
        check(run.returncode == 0 and time.monotonic() - started < 5, "microsoft-browser.py detaches and returns at once")
        for _ in range(200):
            if len(Listener.received) > count:
                break
            time.sleep(0.05)
        check(len(Listener.received) > count and Listener.received[-1].get("state") == "st-2",
              "... and the listener receives the code")
        secrets_seen.add(Listener.received[-1].get("code", ""))
        # Deny.
        environment.update(MICROSOFT_STANDIN_FOREGROUND="1", MICROSOFT_STANDIN_ACTION="deny")
        params["state"] = "st-3"
        run = subprocess.run([BROWSER, "%s/common/oauth2/v2.0/authorize?%s" % (s.base, urllib.parse.urlencode(params))],
                             env=environment, capture_output=True, text=True, timeout=60)
        check(run.returncode == 0 and Listener.received[-1].get("error") == "access_denied"
              and Listener.received[-1].get("state") == "st-3", "deny: the listener receives error=access_denied")
        # An error page (unknown client) is no redirect: the browser fails.
        environment["MICROSOFT_STANDIN_ACTION"] = "allow"
        bad = dict(params, client_id="00000000-1111-2222-3333-444444444444")
        run = subprocess.run([BROWSER, "%s/common/oauth2/v2.0/authorize?%s" % (s.base, urllib.parse.urlencode(bad))],
                             env=environment, capture_output=True, text=True, timeout=60)
        check(run.returncode == 1 and "AADSTS700016" in run.stderr, "an error page makes the browser fail", run.stderr)
        # Another CA: refused.
        other = dict(environment, MICROSOFT_STANDIN_CA=os.path.join(os.path.dirname(s.info["ca_file"]), "server.pem"))
        run = subprocess.run([BROWSER, "%s/common/oauth2/v2.0/authorize?%s" % (s.base, urllib.parse.urlencode(params))],
                             env=other, capture_output=True, text=True, timeout=60)
        check(run.returncode == 1, "the browser trusts only MICROSOFT_STANDIN_CA")
        run = subprocess.run([BROWSER, "https://login.microsoftonline.com/common/oauth2/v2.0/authorize"],
                             env=environment, capture_output=True, text=True, timeout=60)
        check(run.returncode == 1 and "loopback" in run.stderr, "the browser never leaves the loopback interface")
    finally:
        server.shutdown()


def check_logs(s, browser_log):
    found = []
    for path in (s.info["requests_log"], s.info["authorize_log"], browser_log):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        found += [(os.path.basename(path), value[:12]) for value in secrets_seen if len(value) >= 8 and value in text]
    check(not found, "no token, code or secret in requests.log, authorize.log or the browser's log (%d values)"
          % len(secrets_seen), found)
    with open(s.info["requests_log"], encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle]
    check(all({"time", "method", "path", "status"} <= set(line) for line in lines), "requests.log: one JSON line each")


def check_stopping(state_root):
    directory = tempfile.mkdtemp(dir=state_root)
    process, info = start(directory)
    os.kill(process.pid, signal.SIGTERM)
    check(gone_within(process, 10) and not os.path.exists(os.path.join(directory, "microsoft-identity-platform.json")),
          "SIGTERM stops it and removes the info file")
    directory = tempfile.mkdtemp(dir=state_root)
    process, info = start(directory, "--lifetime", "1")
    check(gone_within(process, 10), "it stops when its lifetime is over")
    directory = tempfile.mkdtemp(dir=state_root)
    sleeper = subprocess.Popen(["sleep", "60"])
    process, info = start(directory, watch=sleeper.pid)
    sleeper.kill()
    sleeper.wait()
    check(gone_within(process, 10), "it stops when the watched process is gone")


def main():
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    with tempfile.TemporaryDirectory(prefix="ms-standin-selfcheck-") as root:
        directory = os.path.join(root, "main")
        os.mkdir(directory)
        process, info = start(directory)
        try:
            s = StandIn(info)
            check_transport(s)
            check_discovery(s)
            check_code_flow(s)
            check_tenants(s)
            check_refresh(s)
            check_faults(s)
            check_device(s)
            check_client_credentials(s)
            check_graph(s)
            check_claims_challenge(s)
            browser_log = os.path.join(root, "browser.log")
            check_browser(s, browser_log)
            check_logs(s, browser_log)
        finally:
            process.terminate()
            process.wait(timeout=10)
        check_stopping(root)
    print("all %d checks passed" % checks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
