"""Smoke test of the test authorization server and the scripted browser, end to end.

    .build-python/venv/bin/python Tests/AuthServer/selfcheck.py [--quick]

Starts a server in a temporary state dir (through Tests/Support/auth-server.sh), plays
tokenctl's part with a tiny loopback listener, and checks every configured behaviour:
discovery, code + PKCE over a loopback redirect with any port, OIDC ID token (RS256,
verified against the JWKS), refresh-token rotation and reuse detection, revocation,
device grant, client credentials, consent denial, the scripted browser's actions, that
no secret reaches a log, and the server's lifecycle (--quick skips the lifecycle checks).
Exits non-zero on the first failed check.
"""
import base64
import hashlib
import http.server
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlencode, urlsplit

import requests
from jwcrypto import jwk, jwt

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
AUTH_SERVER = os.path.join(REPO, "Tests", "Support", "auth-server.sh")
BROWSER = os.path.join(REPO, "Tests", "Support", "scripted-browser.sh")

SECRETS = set()  # every code, token, password and client secret seen
RESULTS = []


def check(condition, what):
    if not condition:
        print(f"FAIL  {what}", flush=True)
        sys.exit(1)
    RESULTS.append(what)
    print(f"ok    {what}", flush=True)


def secret(value):
    if value:
        SECRETS.add(value)
    return value


# --- a stand-in for tokenctl's loopback listener ---------------------------------------


class Listener:
    """http://127.0.0.1:<random>/callback; answers 400 when `state` is not the expected one."""

    def __init__(self):
        self.hits = []
        self.expected_state = None
        self.event = threading.Event()
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                ok = parts.path == "/callback" and query.get("state") == listener.expected_state
                listener.hits.append((parts.path, query, 200 if ok else 400))
                self.send_response(200 if ok else 400)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"done\n" if ok else b"bad request\n")
                if ok:
                    listener.event.set()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.redirect_uri = f"http://127.0.0.1:{self.port}/callback"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def expect(self, state):
        self.expected_state = state
        self.hits.clear()
        self.event.clear()

    def wait(self, seconds=30):
        return self.event.wait(seconds)


# --- helpers ---------------------------------------------------------------------------


def pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def authorize_url(info, redirect_uri, state, nonce, challenge=None, method="S256", scope=None, client="native"):
    params = {
        "response_type": "code",
        "client_id": info["clients"][client]["client_id"],
        "redirect_uri": redirect_uri,
        "scope": scope or "openid profile email read offline_access",
        "state": state,
        "nonce": nonce,
    }
    if challenge:
        params.update(code_challenge=challenge, code_challenge_method=method)
    return info["endpoints"]["authorization"] + "?" + urlencode(params)


class Env:
    def __init__(self, info, server_json, workdir):
        self.info = info
        self.server_json = server_json
        self.workdir = workdir
        self.browser_log = os.path.join(workdir, "browser.log")
        self.outputs = []  # stdout/stderr of every browser run

    def browser(self, args, foreground=True, **env):
        environment = dict(os.environ)
        environment.update(
            SCRIPTED_BROWSER_SERVER_JSON=self.server_json,
            SCRIPTED_BROWSER_LOG=self.browser_log,
            SCRIPTED_BROWSER_FOREGROUND="1" if foreground else "0",
        )
        environment.update(env)
        started = time.monotonic()
        done = subprocess.run([BROWSER, *args], env=environment, capture_output=True, text=True, timeout=90)
        self.outputs.append(done.stdout + done.stderr)
        return done.returncode, time.monotonic() - started

    def token(self, data, auth=None):
        response = requests.post(self.info["endpoints"]["token"], data=data, auth=auth, timeout=10)
        body = response.json()
        for key in ("access_token", "refresh_token", "id_token"):
            secret(body.get(key))
        return response.status_code, body

    def code_flow(self, listener, **browser_env):
        """Runs the browser in the foreground with `allow`; returns (tokens, callback query)."""
        verifier, challenge = pkce()
        state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        listener.expect(state)
        url = authorize_url(self.info, listener.redirect_uri, state, nonce, challenge)
        status, _ = self.browser([url], **browser_env)
        check(status == 0 and listener.wait(5), "scripted browser signs in, consents and loads the callback")
        query = listener.hits[-1][1]
        secret(query.get("code"))
        status, body = self.token(
            {
                "grant_type": "authorization_code",
                "code": query["code"],
                "redirect_uri": listener.redirect_uri,
                "client_id": self.info["clients"]["native"]["client_id"],
                "code_verifier": verifier,
            }
        )
        check(status == 200 and body.get("refresh_token"), "code exchange returns tokens with a refresh token")
        return body, query, nonce


def refresh(env, refresh_token, client_id):
    return env.token({"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id})


def listening_addresses(port):
    """Local addresses in LISTEN state for `port`, from /proc/net/tcp{,6}."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    address, hexport = fields[1].split(":")
                    if int(hexport, 16) == port and fields[3] == "0A":
                        found.append(address)
        except OSError:
            pass
    return found


def start_server(state_dir, *extra, env=None, quiet=False):
    started = time.monotonic()
    done = subprocess.run([AUTH_SERVER, "start", state_dir, *extra], capture_output=True, text=True, env=env)
    elapsed = time.monotonic() - started
    if done.returncode != 0 and not quiet:
        print(done.stdout, done.stderr)
    return done.returncode, elapsed


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# --- the checks ------------------------------------------------------------------------


def check_discovery(env):
    info = env.info
    discovery = requests.get(info["endpoints"]["discovery"], timeout=10).json()
    check(discovery["issuer"] == info["issuer"], "discovery issuer equals server.json issuer")
    endpoints = info["endpoints"]
    check(
        discovery["authorization_endpoint"] == endpoints["authorization"]
        and discovery["token_endpoint"] == endpoints["token"]
        and discovery["revocation_endpoint"] == endpoints["revocation"]
        and discovery["device_authorization_endpoint"] == endpoints["device_authorization"]
        and discovery["userinfo_endpoint"] == endpoints["userinfo"]
        and discovery["jwks_uri"] == endpoints["jwks"],
        "discovery endpoints equal server.json's, revocation and device included",
    )
    check(discovery["code_challenge_methods_supported"] == ["S256"], "discovery: PKCE S256 only")
    check(
        set(discovery["grant_types_supported"])
        == {"authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"},
        "discovery: grant_types_supported",
    )
    check("RS256" in discovery["id_token_signing_alg_values_supported"], "discovery: RS256 ID tokens")
    metadata = requests.get(endpoints["server_metadata"], timeout=10).json()
    check(
        metadata["issuer"] == info["issuer"] and metadata["device_authorization_endpoint"] == endpoints["device_authorization"],
        "RFC 8414 metadata at /.well-known/oauth-authorization-server/o agrees",
    )
    addresses = listening_addresses(info["port"])
    check(addresses == ["0100007F"], "the server listens on 127.0.0.1 only")


def verify_id_token(env, id_token, nonce, user):
    jwks = requests.get(env.info["endpoints"]["jwks"], timeout=10).json()
    keyset = jwk.JWKSet.from_json(json.dumps(jwks))
    token = jwt.JWT(jwt=id_token, key=keyset, algs=["RS256"], expected_type="JWS")
    header = json.loads(token.header)
    claims = json.loads(token.claims)
    check(header["alg"] == "RS256" and header.get("kid") in [k["kid"] for k in jwks["keys"]],
          "ID token is RS256 and its signature verifies against the JWKS")
    check(claims["iss"] == env.info["issuer"], "ID token iss equals the issuer")
    check(claims["aud"] in (env.info["clients"]["native"]["client_id"], [env.info["clients"]["native"]["client_id"]]),
          "ID token aud is the native client")
    check(claims.get("nonce") == nonce, "ID token echoes the nonce")
    check(claims["sub"] == user["sub"] and claims.get("email") == user["email"]
          and claims.get("preferred_username") == user["username"],
          "ID token carries sub, email, preferred_username of the signed-in user")
    return claims


def check_code_flow(env, listener):
    info = env.info
    native = info["clients"]["native"]["client_id"]
    ada = info["users"][0]

    # As tokenctl does it: $BROWSER URL, not waited for.
    verifier, challenge = pkce()
    state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    listener.expect(state)
    url = authorize_url(info, listener.redirect_uri, state, nonce, challenge)
    status, elapsed = env.browser([url], foreground=False)
    check(status == 0 and elapsed < 2, f"scripted browser returns at once in URL mode ({elapsed:.2f} s)")
    check(listener.wait(30), "…and then loads the callback on a random loopback port")
    query = listener.hits[-1][1]
    code = secret(query["code"])
    check(query.get("iss") == info["issuer"], "authorization response carries iss (RFC 9207)")

    wrong = env.token({"grant_type": "authorization_code", "code": code, "redirect_uri": listener.redirect_uri,
                       "client_id": native, "code_verifier": pkce()[0]})
    check(wrong[0] == 400 and wrong[1].get("error") == "invalid_grant", "wrong code_verifier: invalid_grant")
    # A failed PKCE check burns the code in oauthlib; get a fresh one.
    body, query, nonce = env.code_flow(listener)
    expected = int(os.environ.get("AUTH_SERVER_ACCESS_TOKEN_SECONDS") or 3600)
    check(body["expires_in"] == expected, f"expires_in is AUTH_SERVER_ACCESS_TOKEN_SECONDS ({expected})")
    check(set(body["scope"].split()) == {"openid", "profile", "email", "read", "offline_access"}, "granted scopes")
    verify_id_token(env, body["id_token"], nonce, ada)

    again = env.token({"grant_type": "authorization_code", "code": query["code"], "redirect_uri": listener.redirect_uri,
                       "client_id": native, "code_verifier": "x" * 43})
    check(again[0] == 400 and again[1].get("error") == "invalid_grant", "an authorization code works once")

    userinfo = requests.get(info["endpoints"]["userinfo"], headers={"Authorization": f"Bearer {body['access_token']}"}, timeout=10)
    check(userinfo.status_code == 200 and userinfo.json().get("email") == ada["email"], "userinfo answers with the claims")
    return body


def check_authorization_errors(env, listener):
    info = env.info
    out = os.path.join(env.workdir, "redirect.txt")

    def printed(url, **extra):
        if os.path.exists(out):
            os.unlink(out)
        status, _ = env.browser([url], SCRIPTED_BROWSER_ACTION="print", SCRIPTED_BROWSER_OUTPUT=out, **extra)
        if status != 0 or not os.path.exists(out):
            return status, None
        with open(out) as f:
            return status, f.read().strip()

    state = secrets.token_urlsafe(8)
    status, final = printed(authorize_url(info, listener.redirect_uri, state, "n"))
    check(final and parse_qs(urlsplit(final).query).get("error") == ["invalid_request"],
          "PKCE is required: no code_challenge gives error=invalid_request")
    _, challenge = pkce()
    status, final = printed(authorize_url(info, listener.redirect_uri, state, "n", challenge=challenge, method="plain"))
    check(final and "error" in parse_qs(urlsplit(final).query), "code_challenge_method=plain is refused")

    verifier, challenge = pkce()
    listener.expect(state)
    status, final = printed(authorize_url(info, listener.redirect_uri, state, "n", challenge=challenge))
    query = parse_qs(urlsplit(final).query)
    secret(query["code"][0])
    check(status == 0 and final.startswith(listener.redirect_uri + "?") and not listener.hits,
          "print: writes the final redirect URL to SCRIPTED_BROWSER_OUTPUT, does not load it")
    status, body = env.token({"grant_type": "authorization_code", "code": query["code"][0], "redirect_uri": listener.redirect_uri,
                              "client_id": info["clients"]["native"]["client_id"], "code_verifier": verifier})
    check(status == 200, "…and the pasted code can be exchanged")

    for bad, what in (
        (f"http://127.0.0.1:{listener.port}/other", "another path"),
        (f"http://localhost:{listener.port}/callback", "localhost instead of 127.0.0.1"),
        (f"http://127.0.0.1:{listener.port}/callback?x=1", "an extra query"),
        ("http://example.test/callback", "another host"),
    ):
        listener.expect(state)
        status, _ = env.browser([authorize_url(info, bad, state, "n", challenge=challenge)])
        check(status != 0 and not listener.hits, f"redirect URI with {what} is refused (no redirect)")
    # The graph client registers http://localhost/ as Microsoft does: any port, Graph's scopes.
    graph = f"http://localhost:{listener.port}/"
    status, final = printed(authorize_url(info, graph, state, "n", challenge=challenge, client="graph",
                                          scope="openid profile offline_access User.Read User.ReadBasic.All"))
    check(final and final.startswith(graph + "?"), "graph client: http://localhost:<port>/ and Graph's scopes are accepted")
    ipv6 = f"http://[::1]:{listener.port}/callback"
    status, final = printed(authorize_url(info, ipv6, state, "n", challenge=challenge))
    check(final and final.startswith(ipv6 + "?"), "http://[::1]:<port>/callback is accepted too")

    state = secrets.token_urlsafe(8)
    listener.expect(state)
    status, _ = env.browser([authorize_url(info, listener.redirect_uri, state, "n", challenge=challenge)],
                            SCRIPTED_BROWSER_ACTION="deny")
    query = listener.hits[-1][1] if listener.hits else {}
    check(status == 0 and query.get("error") == "access_denied" and query.get("state") == state and "code" not in query,
          "deny: the callback gets error=access_denied with the state")

    before = open(env.browser_log).read()
    body, _, _ = env.code_flow(listener, SCRIPTED_BROWSER_ACTION="forge-state", SCRIPTED_BROWSER_OUTPUT=out)
    added = open(env.browser_log).read()[len(before):]
    check("forged callback status 400" in added and open(out).read() == "400\n"
          and len([h for h in listener.hits if h[2] == 400]) == 1,
          "forge-state: hits the callback with a wrong state first (got 400), then completes")

    listener.expect("whatever")
    status, elapsed = env.browser([authorize_url(info, listener.redirect_uri, "s", "n", challenge=challenge)],
                                  SCRIPTED_BROWSER_ACTION="ignore")
    time.sleep(0.5)
    check(status == 0 and not listener.hits, "ignore: does nothing")

    listener.expect(state)
    status, _ = env.browser([authorize_url(info, listener.redirect_uri, state, "n", challenge=challenge)],
                            SCRIPTED_BROWSER_PASSWORD="wrong-password")
    check(status == 1 and not listener.hits, "a wrong password fails the browser, without redirect")

    grace = info["users"][1]
    body, _, nonce = env.code_flow(listener, SCRIPTED_BROWSER_USER="grace")
    verify_id_token(env, body["id_token"], nonce, grace)


def check_refresh(env, tokens):
    native = env.info["clients"]["native"]["client_id"]
    first = tokens["refresh_token"]
    status, body = refresh(env, first, native)
    check(status == 200 and body["refresh_token"] != first and body["access_token"] != tokens["access_token"],
          "refresh: new access token and a new (rotated) refresh token")
    second = body["refresh_token"]
    status, body = refresh(env, first, native)
    check(status == 400 and body.get("error") == "invalid_grant", "reusing the old refresh token: invalid_grant")
    status, body = refresh(env, second, native)
    check(status == 400 and body.get("error") == "invalid_grant",
          "after that reuse, the new refresh token is revoked too (reuse detection)")


def check_revocation(env, listener):
    native = env.info["clients"]["native"]["client_id"]
    tokens, _, _ = env.code_flow(listener)
    revoke = env.info["endpoints"]["revocation"]
    response = requests.post(revoke, data={"token": tokens["refresh_token"], "token_type_hint": "refresh_token",
                                           "client_id": native}, timeout=10)
    check(response.status_code == 200, "RFC 7009: revoking the refresh token answers 200")
    status, body = refresh(env, tokens["refresh_token"], native)
    check(status == 400 and body.get("error") == "invalid_grant", "a revoked refresh token cannot be used")
    response = requests.post(revoke, data={"token": "not-a-token", "client_id": native}, timeout=10)
    check(response.status_code == 200, "revoking an unknown token also answers 200")

    tokens, _, _ = env.code_flow(listener)
    requests.post(revoke, data={"token": tokens["access_token"], "token_type_hint": "access_token", "client_id": native}, timeout=10)
    userinfo = requests.get(env.info["endpoints"]["userinfo"], headers={"Authorization": f"Bearer {tokens['access_token']}"}, timeout=10)
    check(userinfo.status_code == 401, "a revoked access token is refused by userinfo")


def check_device(env):
    info = env.info
    device = info["clients"]["device"]["client_id"]

    def authorize(scope="openid profile read"):
        response = requests.post(info["endpoints"]["device_authorization"], data={"client_id": device, "scope": scope}, timeout=10)
        body = response.json()
        secret(body.get("device_code"))
        return response.status_code, body

    def poll(device_code):
        return env.token({"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": device_code, "client_id": device})

    status, grant = authorize()
    check(status == 200 and grant["verification_uri"] == info["endpoints"]["device_verification"]
          and grant.get("interval") and grant.get("user_code"), "device authorization returns codes and the verification URI")
    status, body = poll(grant["device_code"])
    check(status == 400 and body.get("error") == "authorization_pending", "polling before approval: authorization_pending")
    status, _ = env.browser(["--device", grant["verification_uri"], grant["user_code"]])
    check(status == 0, "scripted browser --device signs in and approves the user code")
    status, body = poll(grant["device_code"])
    check(status == 200 and body.get("access_token"), "polling after approval returns tokens")
    if body.get("refresh_token"):
        status, refreshed = refresh(env, body["refresh_token"], device)
        check(status == 200, "the device client can refresh")
    status, again = poll(grant["device_code"])
    check(status == 400, "a device code is redeemed once")

    status, grant = authorize()
    status, _ = env.browser(["--device", grant["verification_uri_complete"]], SCRIPTED_BROWSER_USER="grace")
    check(status == 0, "scripted browser --device works with verification_uri_complete alone")
    status, body = poll(grant["device_code"])
    check(status == 200, "…and the device gets its tokens")

    status, grant = authorize()
    status, _ = env.browser(["--device", grant["verification_uri"], grant["user_code"]], SCRIPTED_BROWSER_ACTION="deny")
    check(status == 0, "scripted browser --device can deny")
    status, body = poll(grant["device_code"])
    check(status == 400 and body.get("error") == "access_denied", "polling after denial: access_denied")
    return body


def check_client_credentials(env):
    service = env.info["clients"]["service"]
    secret(service["client_secret"])
    status, body = env.token({"grant_type": "client_credentials", "scope": "read"}, auth=(service["client_id"], service["client_secret"]))
    check(status == 200 and body.get("access_token") and "refresh_token" not in body, "client_credentials with client_secret_basic")
    access_token = body["access_token"]
    status, body = env.token({"grant_type": "client_credentials", "client_id": service["client_id"], "client_secret": service["client_secret"]})
    check(status == 200 and body.get("access_token"), "client_credentials with client_secret_post")
    status, body = env.token({"grant_type": "client_credentials"}, auth=(service["client_id"], "wrong"))
    check(status == 401 and body.get("error") == "invalid_client", "a wrong client secret: invalid_client")
    response = requests.post(env.info["endpoints"]["introspection"], data={"token": access_token},
                             auth=(service["client_id"], service["client_secret"]), timeout=10)
    check(response.status_code == 200 and response.json().get("active") is True, "introspection (RFC 7662) for the service client")

    def one(_):
        return env.token({"grant_type": "client_credentials"}, auth=(service["client_id"], service["client_secret"]))[0]

    with ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(one, range(48)))
    check(statuses == [200] * 48, "48 concurrent token requests all succeed")


def check_no_secrets(env, state_dir):
    for user in env.info["users"]:
        secret(user["password"])
    texts = {"server.log": open(os.path.join(state_dir, "server.log")).read(),
             "browser log": open(env.browser_log).read(),
             "browser stdout/stderr": "\n".join(env.outputs)}
    for name, text in texts.items():
        leaked = [s for s in SECRETS if s in text]
        check(not leaked, f"no code, token, password or client secret in the {name} ({len(SECRETS)} secrets checked)")


def wait_gone(pid, seconds):
    """Seconds until process `pid` is gone or a zombie (None if still running after `seconds`)."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            state = "gone"
        if state in ("gone", "Z", "X"):
            return time.monotonic() - started
        time.sleep(0.02)
    return None


def check_lifecycle(workdir):
    a = os.path.join(workdir, "lifetime")
    status, _ = start_server(a, "--lifetime", "2", "--watch-pid", "0")
    pid = read_json(os.path.join(a, "server.json"))["pid"]
    time.sleep(2)
    check(status == 0 and wait_gone(pid, 5) is not None and not os.path.exists(os.path.join(a, "server.json")),
          "--lifetime: the server stops by itself and removes server.json")

    b = os.path.join(workdir, "parent")
    done = subprocess.run(["sh", "-c", f'"{AUTH_SERVER}" start "{b}" && cat "{b}/server.json" && sleep 1'],
                          capture_output=True, text=True)
    pid = json.loads(done.stdout)["pid"]
    gone = wait_gone(pid, 5)
    check(done.returncode == 0 and gone is not None, f"the server stops when the process that ran start is gone ({gone:.2f} s)")

    c = os.path.join(workdir, "stop")
    start_server(c)
    pid = read_json(os.path.join(c, "server.json"))["pid"]
    again, _ = start_server(c, quiet=True)
    check(again != 0, "a second start on a running state dir is refused")
    first = subprocess.run([AUTH_SERVER, "stop", c]).returncode
    second = subprocess.run([AUTH_SERVER, "stop", c]).returncode
    check(first == 0 and second == 0 and wait_gone(pid, 0.1) is not None, "stop stops it, and is idempotent")
    status, elapsed = start_server(c)
    check(status == 0, f"start again on the same state dir ({elapsed:.2f} s)")
    subprocess.run([AUTH_SERVER, "stop", c])


def main():
    quick = "--quick" in sys.argv
    workdir = tempfile.mkdtemp(prefix="auth-server-selfcheck.")
    state_dir = os.path.join(workdir, "server")
    status, elapsed = start_server(state_dir)
    check(status == 0, f"auth-server.sh start ({elapsed:.2f} s)")
    server_json = os.path.join(state_dir, "server.json")
    env = Env(read_json(server_json), server_json, workdir)
    try:
        listener = Listener()
        check_discovery(env)
        tokens = check_code_flow(env, listener)
        check_refresh(env, tokens)
        check_authorization_errors(env, listener)
        check_revocation(env, listener)
        check_device(env)
        check_client_credentials(env)
        check_no_secrets(env, state_dir)
    finally:
        subprocess.run([AUTH_SERVER, "stop", state_dir])
    if not quick:
        check_lifecycle(workdir)
    print(f"all {len(RESULTS)} checks passed (work dir {workdir})")


if __name__ == "__main__":
    main()
