#!/usr/bin/env python3
"""A stand-in for the Microsoft identity platform (v2.0 endpoints) and Microsoft Graph, for
tokenctl's integration tests, written from Microsoft's public documentation. Python 3
standard library and the `openssl` command only.

Usage
    microsoft-identity-platform.py --state-dir DIR [--watch-pid PID] [--lifetime SECONDS]
        [--access-token-lifetime N] [--default-user UPN] [--device-interval N]
        [--graph-page-size N]

It makes a throw-away CA and a server certificate with `openssl` in DIR (DIR/ca.pem; the
server certificate names IP:127.0.0.1 and DNS:localhost), binds 127.0.0.1 on a free port,
serves HTTPS only, and publishes DIR/microsoft-identity-platform.json atomically (see
loopback_service.py). It stops by itself (the file removed) when the watched process
(default: its parent) is gone, after --lifetime seconds (default 600), or on
SIGTERM/SIGINT/SIGHUP.

The info file holds
    base_url  "https://127.0.0.1:PORT"      port, pid
    host      "127.0.0.1:PORT": both tokenctl's `authority_host` and its `graph_host`
    ca_file   absolute path of DIR/ca.pem, the only CA that signs the server certificate
    tenants   {"contoso": {"id", "domain", "domains", "name"}, "fabrikam": {...},
               "consumers": {"id": "9188040d-6c67-4c5b-b112-36a304b66dad", ...}}
    client_id          the public client (the one tokenctl uses)
    clients   {"public": {"client_id", "redirect_uris", "allow_public_client": true},
               "public_no_device": {... "allow_public_client": false},
               "confidential": {"client_id", "client_secret", "app_roles"},
               "spa": {...: the redirect registered as a single-page application},
               "disabled": {...: the app disabled in its tenant}}
    users     {UPN: {"kind": "work"|"personal", "home", "name", "oids": {tenant: oid},
               "guest_in": [tenant...]}}
    default_user, graph_resource, graph_app_id, control_url, requests_log, authorize_log,
    authority_template "https://127.0.0.1:PORT/{tenant}/oauth2/v2.0"

Directory
    Tenants: contoso (c0a7050c-7e57-4000-8000-000000000001, contoso.test), fabrikam
    (fab41ca0-7e57-4000-8000-000000000002, fabrikam.test), and the personal-account tenant
    consumers (9188040d-6c67-4c5b-b112-36a304b66dad).
    Accounts: ada@contoso.test (member of contoso, guest in fabrikam with another oid),
    bob@contoso.test, carol@fabrikam.test, dan@outlook.test (personal), and
    sam@contoso.test, both a work account of contoso and a personal account (the twin
    signed in at consumers, with domain_hint=consumers, or when the person picks it with
    the browser's cookie `standin_kind=personal`). Each tenant's
    Graph directory also has users to search (contoso: Adam, Adele, Adrian, Adelaide, ...).
    Apps: the public client (redirect http://localhost, "Allow public client flows" yes),
    a public client with public client flows no, a confidential client with a secret and
    the application permission User.Read.All, one whose redirect is registered as a
    single-page application (a code redeemed without Origin: AADSTS9002327), and one
    disabled in its tenant (every token and device code request: AADSTS7000112).

Endpoints (TENANT = common | organizations | consumers | a tenant id | a tenant domain)
    GET  /TENANT/v2.0/.well-known/openid-configuration, GET /TENANT/discovery/v2.0/keys
    GET  /TENANT/oauth2/v2.0/authorize     no UI: redirects (302) at once
    POST /TENANT/oauth2/v2.0/token         authorization_code, refresh_token,
                                           device_code, client_credentials
    POST /TENANT/oauth2/v2.0/devicecode
    GET  /devicelogin[?user_code=X&login_hint=UPN&decision=allow|deny]  (the stand-in's
         scripted verification page: without user_code a form, with it the decision)
    GET  /error?code=N                     what an AADSTS code means
    Graph: GET /v1.0/me, GET /v1.0/users?$filter=startswith(F,'x')&$top=N[&$select=..],
    GET /v1.0/users/{id|upn}, POST /v1.0/me/revokeSignInSessions,
    POST /v1.0/users/{id|upn}/revokeSignInSessions, GET|POST /oidc/userinfo.

Who signs in: at the authorization endpoint, a browser already signed in to Microsoft, a
cookie `standin_session=UPN` that `microsoft-browser.py` sends when MICROSOFT_STANDIN_SESSION
is set, signs that person in again without asking when the request sends no `prompt` and
no login_hint naming someone else (single sign-on: "prompt=select_account interrupts
single sign-on", so without it the session's account is used;
https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow, the
prompt parameter). Otherwise, and always on the device page, the person is asked: a
cookie `standin_user=UPN` that `microsoft-browser.py` sends when MICROSOFT_STANDIN_USER is
set (the person at the keyboard types or picks their own account, whatever the hint
pre-filled), else the request's login_hint (pre-filled, accepted), else (authorization
endpoint) the session's account, else the stand-in's default user (set with
--default-user or the control API; initially ada@contoso.test). A cookie
`standin_consent=deny` makes the user decline (redirect error=access_denied, AADSTS65004).

Tenant rules (https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc,
https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow): `common` signs the user in at
their home tenant (personal accounts at consumers); `organizations` refuses personal
accounts and `consumers` work accounts (AADSTS500208); a tenant id or domain signs a
member in as member, a guest as the guest object (its own oid, userType Guest, idp = the
home issuer), anyone else is refused (AADSTS50020). An unknown tenant is AADSTS90002.
Errors Microsoft shows on its own page (unknown client AADSTS700016, redirect URI
mismatch AADSTS50011, unknown tenant) are a 400 HTML page here, never a redirect; errors
about the user (AADSTS50034 unknown account, 500208, 50020, 65004 declined, 90094 admin
consent needed) are redirected as error=access_denied, since the stand-in has no page of
its own to show them on; prompt=none needing consent gives error=consent_required, and
prompt=none from a browser signed in to no one (no `standin_session`) error=login_required
(AADSTS50058): a request that signs no one in learns only whether its redirect is registered.

Tokens: access tokens are RS256 JWTs for Graph (aud 00000003-0000-0000-c000-000000000000,
v1.0-style claims: tid, oid, scp or roles, appid, idtyp, xms_cc when the client declared
cp1), also recorded server-side (Graph checks existence, expiry and CAE revocation). ID
tokens: iss https://HOST/{tid}/v2.0, aud client id, tid, oid/name/preferred_username with
the profile scope, email with the email scope, pairwise sub, ver 2.0, nonce, idp for
guests. Refresh tokens are opaque, bound to user and client but not to a tenant or
resource, replaced on every use without revoking the old one, and revoked by a user's
session revocation. Access-token lifetime: --access-token-lifetime (default 3600);
expires_in and ext_expires_in both carry it.

Consent: each tenant has a consented set of Graph permissions (default User.Read,
User.ReadBasic.All, with openid profile email offline_access); an interactive sign-in also
consents to the (not admin-only) permissions it asked for, for that client, user and
tenant. `.default` resolves to that set. A refresh or code redemption whose scope names a
permission outside it is refused: 400 invalid_grant, AADSTS65001, suberror
consent_required. Admin-only permissions (User.Read.All, User.ReadWrite.All,
User.RevokeSessions.All, Directory.*) need the tenant's consented set.

Graph: bearer tokens issued here, checked for existence, expiry and audience (401
InvalidAuthenticationToken with WWW-Authenticate Bearer realm="", authorization_uri=...,
client_id="00000003-..."). /me is the token's oid in the token's tid (the guest object in
fabrikam; `$select=id,userType` shows "Guest"; Graph's default properties leave userType
out). Listing users needs User.ReadBasic.All (or a wider permission; app tokens
User.Read.All); paging with @odata.nextLink. revokeSignInSessions needs
User.RevokeSessions.All (or User.ReadWrite.All, Directory.ReadWrite.All); in the user's
home tenant it revokes all the user's refresh tokens (later refresh: AADSTS50173) and
makes CAE-capable access tokens (xms_cc cp1) issued before it fail with a claims
challenge; for a guest object it revokes nothing, as documented. Errors have Graph's
shape {"error": {"code", "message", "innerError": {"date", "request-id",
"client-request-id"}}}.

Control API (loopback only): POST /_test/control with a JSON object; keys are applied in
this order, answer 200 {"ok": true, "state": <as GET /_test/state>}:
    "reset": true            forget scripted faults and challenges (not tokens or settings)
    "set": {                 any of:
        "default_user": UPN, "access_token_lifetime": N, "device_interval": N,
        "device_expires_in": N, "device_slow_down": bool (default true: a poll sooner
        than interval seconds after the previous one gets slow_down),
        "graph_page_size": N, "consented": {TENANT: [permissions]} (replaces that
        tenant's consented set; TENANT a key, id or domain), "app_roles": {TENANT:
        [roles]}, "redirect_uris": [URIs of the public clients]}
    "revoke_sessions": UPN | [UPN...]   as an admin revoking the user's sessions
    "expire_access_tokens": true        every access token issued so far expires now
    "next_token_errors": [FAULT...] or {GRANT: [FAULT...]}, GRANT one of
        authorization_code, refresh_token, device_code, client_credentials, any.
        The next token requests (of that grant, else any grant) get these instead.
        FAULT {"kind": K, "repeat": N (default 1), "retry_after": S, "status": N,
               "error": E, "suberror": S, "claims": "...", "description": "..."}
        K: interaction_required (400, AADSTS50076, MFA), consent_required (400
        invalid_grant AADSTS65001 suberror consent_required), login_required (400
        invalid_grant AADSTS50058), expired (400 invalid_grant AADSTS70008; the presented
        refresh token stays expired), revoked (400 invalid_grant AADSTS50173; the
        presented refresh token stays revoked), temporarily_unavailable (503,
        AADSTS90006, Retry-After: retry_after, default 1), throttled (429, AADSTS90055,
        Retry-After), server_error (500, AADSTS50000).
    "next_authorize_errors": [{"kind": interaction_required | login_required |
        consent_required | access_denied, "repeat": N}]: the next authorize requests
        redirect with that error (AADSTS50076 / 50058 / 65001 / 65004).
    "next_graph_errors": [{"kind": K, "repeat": N, "retry_after": S, "any_client": bool}]
        K: throttled (429 TooManyRequests, Retry-After, default 2), unavailable (503
        serviceNotAvailable, Retry-After), invalid_token (401 InvalidAuthenticationToken),
        claims_challenge (401 with error="insufficient_claims" and claims= base64 of
        {"access_token":{"nbf":{"essential":true,"value":"<now>"}}}; every token of that
        user issued before it is refused the same way until a new token is issued. As
        Graph does, only for tokens whose client declared the cp1 capability (xms_cc),
        unless "any_client": true; otherwise the fault is used up and the call served).
    GET /_test/state: settings, queued faults, and counts of tokens (no token values).

Logs: DIR/requests.log, one JSON line per request: time, method, path, the query and form
fields that are not secrets (client_id, scope, grant_type, prompt, login_hint, claims,
$filter, ...), the tenant, user and tid concerned, the status and the error/AADSTS code.
No token, code, verifier, secret, device or user code is ever logged. DIR/authorize.log:
one JSON line per authorize request: its full query (no secret is in it) and the outcome
(user, tid, oid, or the error).

Microsoft's documentation behind each behaviour is cited beside the code.
"""

import argparse
import base64
import hashlib
import html
import json
import os
import re
import secrets
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import loopback_service  # noqa: E402

LEARN = "https://learn.microsoft.com/en-us/entra/identity-platform/"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
GRAPH_APP_ID = "00000003-0000-0000-c000-000000000000"
GRAPH_RESOURCE = "https://graph.microsoft.com"
# Graph's resource identifiers: the global service's, and this stand-in's own host, as a
# national cloud's Graph is known by its own host (https://graph.microsoft.us/.default;
# https://learn.microsoft.com/en-us/graph/deployments#microsoft-graph-and-graph-explorer-service-root-endpoints).
# The host is added when the server starts.
GRAPH_RESOURCES = [GRAPH_RESOURCE]
# https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference ("tid"):
# the tenant of personal Microsoft accounts.
CONSUMERS_TID = "9188040d-6c67-4c5b-b112-36a304b66dad"
INFO_NAME = "microsoft-identity-platform.json"
MAX_BODY = 1 << 20

TENANTS = {
    "contoso": {"id": "c0a7050c-7e57-4000-8000-000000000001", "name": "Contoso",
                "domains": ["contoso.test", "contoso.onmicrosoft.com"]},
    "fabrikam": {"id": "fab41ca0-7e57-4000-8000-000000000002", "name": "Fabrikam",
                 "domains": ["fabrikam.test", "fabrikam.onmicrosoft.com"]},
    "consumers": {"id": CONSUMERS_TID, "name": "Microsoft Services", "domains": []},
}


def account(kind, home, name, mail, oids, username=None):
    """An entry of ACCOUNTS; the given name and surname are the name's two words."""
    given, surname = name.split(" ", 1)
    fields = {"kind": kind, "home": home, "name": name, "given": given, "surname": surname, "mail": mail}
    return {**fields, **({"username": username} if username else {}), "oids": oids}


# The people who sign in, with their object in each tenant where they exist: a user's `oid` differs in every tenant
# (https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference, "oid": "If a single user
# exists in multiple tenants, the user contains a different object ID in each tenant").
ACCOUNTS = {
    "ada@contoso.test": account("work", "contoso", "Ada Lovelace", "ada@contoso.test",
                                {"contoso": "ada00000-c0a7-4000-8000-000000000001",
                                 "fabrikam": "ada00000-fab4-4000-8000-000000000002"}),
    "bob@contoso.test": account("work", "contoso", "Bob Kelso", "bob@contoso.test",
                                {"contoso": "b0b00000-c0a7-4000-8000-000000000003"}),
    "carol@fabrikam.test": account("work", "fabrikam", "Carol Danvers", "carol@fabrikam.test",
                                   {"fabrikam": "ca401000-fab4-4000-8000-000000000004"}),
    # A personal Microsoft account's oid, in the 00000000-0000-0000-... form the live service
    # gives them.
    "dan@outlook.test": account("personal", "consumers", "Dan Brown", "dan@outlook.test",
                                {"consumers": "00000000-0000-0000-d0d0-000000000005"}),
    # One address with a work account and a personal Microsoft account, two accounts that sign in with the same
    # username: the personal one is kept under its own key here, and signs in as `username`. Which one signs in
    # is the tenant's choice (consumers, organizations or a tenant), else domain_hint ("consumers" or
    # "organizations" skip the email-based discovery,
    # https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow, domain_hint), else the
    # person's pick (the browser's `standin_kind` cookie, default work); `tid` tells them apart
    # (https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference, "tid": the consumers
    # tenant for personal accounts).
    "sam@contoso.test": account("work", "contoso", "Sam Carter", "sam@contoso.test",
                                {"contoso": "5a300000-c0a7-4000-8000-000000000006"}),
    "sam@contoso.test#personal": account("personal", "consumers", "Sam Carter", "sam@contoso.test",
                                         {"consumers": "00000000-0000-0000-5a30-000000000007"},
                                         username="sam@contoso.test"),
}


def username(key):
    """The username an account signs in with (the personal twin of an address shares it)."""
    return ACCOUNTS[key].get("username", key)


def choose_twin(upn, segment, domain_hint, kind):
    """The account `upn` means at `segment`: the personal twin where the address has one and the personal account
    is meant (see ACCOUNTS)."""
    twin = upn + "#personal"
    if twin not in ACCOUNTS:
        return upn
    resolved = resolve_tenant(segment)
    if resolved is None or resolved[0] in ("organizations", "tenant"):
        return upn
    if resolved[0] == "consumers":
        return twin
    hint = (domain_hint or "").lower()
    if hint in ("consumers", "organizations"):
        return twin if hint == "consumers" else upn
    return twin if kind == "personal" else upn

PUBLIC_CLIENT = "b1e5c0de-7e57-4a11-8000-0000000000a1"
NO_DEVICE_CLIENT = "b1e5c0de-7e57-4a11-8000-0000000000a2"
CONFIDENTIAL_CLIENT = "b1e5c0de-7e57-4a11-8000-0000000000a3"
# An app whose http://localhost redirect is registered under "Single-page application"
# rather than "Mobile and desktop applications": its codes may only be redeemed by a
# browser's cross-origin request (an Origin header), AADSTS9002327
# (https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes;
# https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow, "Redirect URIs for single-page
# apps (SPAs)": the spa redirect type, which needs CORS).
SPA_CLIENT = "b1e5c0de-7e57-4a11-8000-0000000000a4"
# An app disabled in its tenant ("Enabled for users to sign in?" No,
# https://learn.microsoft.com/en-us/entra/identity/enterprise-apps/disable-user-sign-in-portal): no token is issued
# to it, AADSTS7000112 UnauthorizedClientApplicationDisabled
# (https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes).
DISABLED_CLIENT = "b1e5c0de-7e57-4a11-8000-0000000000a5"

# Graph permissions the stand-in knows (canonical spelling); any other well-formed name is
# an invalid scope.
GRAPH_PERMISSIONS = [
    "User.Read", "User.ReadWrite", "User.ReadBasic.All", "User.Read.All", "User.ReadWrite.All",
    "User.RevokeSessions.All", "Directory.Read.All", "Directory.ReadWrite.All", "Directory.AccessAsUser.All",
    "Mail.Read", "Mail.Send", "Calendars.Read", "Files.Read", "Files.ReadWrite", "Sites.Read.All",
]
CANONICAL = {name.lower(): name for name in GRAPH_PERMISSIONS}
# https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow ("Some
# permissions are admin-restricted ... Directory.ReadWrite.All"): a user cannot consent.
ADMIN_ONLY = {"User.Read.All", "User.ReadWrite.All", "User.RevokeSessions.All", "Directory.Read.All",
              "Directory.ReadWrite.All", "Directory.AccessAsUser.All"}
OIDC_SCOPES = ("openid", "profile", "email", "offline_access")
DEFAULT_CONSENT = ["User.Read", "User.ReadBasic.All"]
# https://learn.microsoft.com/en-us/graph/api/user-get and .../user-list (Permissions).
READ_ME = {"User.Read", "User.ReadWrite", "User.ReadBasic.All", "User.Read.All", "User.ReadWrite.All",
           "Directory.Read.All", "Directory.ReadWrite.All", "Directory.AccessAsUser.All"}
LIST_USERS = {"User.ReadBasic.All", "User.Read.All", "User.ReadWrite.All", "Directory.Read.All",
              "Directory.ReadWrite.All", "Directory.AccessAsUser.All"}
LIST_USERS_APP = {"User.Read.All", "User.ReadWrite.All", "Directory.Read.All", "Directory.ReadWrite.All"}
# https://learn.microsoft.com/en-us/graph/api/user-revokesigninsessions (Permissions: least
# privileged User.RevokeSessions.All; higher User.ReadWrite.All, Directory.ReadWrite.All).
REVOKE_SESSIONS = {"User.RevokeSessions.All", "User.ReadWrite.All", "Directory.ReadWrite.All"}
# https://learn.microsoft.com/en-us/graph/api/resources/user: the properties Graph returns
# by default; the others only with $select.
DEFAULT_PROPERTIES = ["businessPhones", "displayName", "givenName", "jobTitle", "mail", "mobilePhone",
                      "officeLocation", "preferredLanguage", "surname", "userPrincipalName", "id"]
ALL_PROPERTIES = DEFAULT_PROPERTIES + ["userType", "accountEnabled", "signInSessionsValidFromDateTime"]
FILTER = re.compile(r"^startswith\((\w+),\s*'((?:[^']|'')*)'\)$")
FILTER_FIELDS = {"givenName", "displayName", "surname", "mail", "userPrincipalName"}

# Query and form fields that are no secret: the only ones whose values reach requests.log.
LOGGED_FIELDS = ("client_id", "scope", "grant_type", "response_type", "response_mode", "prompt", "login_hint",
                 "domain_hint", "claims", "code_challenge_method", "redirect_uri", "decision", "$filter", "$top",
                 "$select", "$skiptoken", "mkt", "client_info")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def now_text():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def iso(timestamp):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


# --- keys and certificates ---------------------------------------------------------------


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=cwd)


def make_pki(directory):
    """A throw-away CA, a server certificate it signs for IP:127.0.0.1 and DNS:localhost, and
    an RSA key (with a self-signed certificate, for x5c) that signs the tokens."""
    old_umask = os.umask(0o077)
    try:
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                "-subj", "/CN=tokenctl Microsoft identity platform stand-in test CA", "-keyout", "ca.key",
                "-out", "ca.pem", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=directory)
        openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-subj", "/CN=127.0.0.1", "-keyout", "server.key", "-out", "server.csr", cwd=directory)
        with open(os.path.join(directory, "server-ext.cnf"), "w") as ext:
            ext.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=critical,CA:FALSE\n"
                      "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
                      "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n")
        openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-set_serial", "0x" + secrets.token_hex(8), "-days", "2", "-out", "server.pem",
                "-extfile", "server-ext.cnf", cwd=directory)
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "signing.key",
                cwd=directory)
        openssl("req", "-x509", "-key", "signing.key", "-subj", "/CN=tokenctl stand-in token signing", "-days", "2",
                "-out", "signing.pem", cwd=directory)
    finally:
        os.umask(old_umask)
    text = subprocess.run(["openssl", "rsa", "-in", "signing.key", "-noout", "-text"], check=True,
                          capture_output=True, text=True, cwd=directory).stdout
    der = subprocess.run(["openssl", "x509", "-in", "signing.pem", "-outform", "DER"], check=True,
                         capture_output=True, cwd=directory).stdout
    return Signer(text, der)


class Signer:
    """RS256 (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518 §3.3) with the key openssl made."""

    DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")

    def __init__(self, rsa_text, certificate_der):
        fields, current = {}, None
        for line in rsa_text.splitlines():
            if line and not line[0].isspace():
                name, _, rest = line.partition(":")
                current = name.strip()
                fields[current] = rest.strip()
            elif current:
                fields[current] += line.strip()

        def number(name):
            return int(fields[name].replace(":", ""), 16)

        self.n, self.d = number("modulus"), number("privateExponent")
        self.e = int(re.match(r"(\d+)", fields["publicExponent"]).group(1))
        self.p, self.q = number("prime1"), number("prime2")
        self.dp, self.dq, self.qinv = number("exponent1"), number("exponent2"), number("coefficient")
        self.size = (self.n.bit_length() + 7) // 8
        # https://learn.microsoft.com/en-us/entra/identity-platform/access-token-claims-reference
        # (header "kid": the thumbprint of the public key; "x5t" the same value).
        self.kid = b64url(hashlib.sha1(certificate_der).digest())
        self.x5c = base64.b64encode(certificate_der).decode()

    def sign(self, data):
        t = self.DIGEST_INFO + hashlib.sha256(data).digest()
        em = b"\x00\x01" + b"\xff" * (self.size - len(t) - 3) + b"\x00" + t
        m = int.from_bytes(em, "big")
        # CRT: four times faster than pow(m, d, n).
        s1, s2 = pow(m, self.dp, self.p), pow(m, self.dq, self.q)
        s = s2 + self.q * ((self.qinv * (s1 - s2)) % self.p)
        return s.to_bytes(self.size, "big")

    def jwt(self, claims):
        header = {"typ": "JWT", "alg": "RS256", "kid": self.kid}
        signing_input = (b64url(json.dumps(header, separators=(",", ":")).encode()) + "." +
                         b64url(json.dumps(claims, separators=(",", ":")).encode()))
        return signing_input + "." + b64url(self.sign(signing_input.encode()))

    def jwk(self):
        def unsigned(value):
            return b64url(value.to_bytes((value.bit_length() + 7) // 8, "big"))
        return {"kty": "RSA", "use": "sig", "kid": self.kid, "x5t": self.kid, "n": unsigned(self.n),
                "e": unsigned(self.e), "x5c": [self.x5c]}


# --- the directory -----------------------------------------------------------------------


def graph_user(tenant, upn, name, given, surname, mail, oid=None, user_type="Member", account=None, **extra):
    user = {"id": oid or str(uuid.uuid5(uuid.NAMESPACE_URL, "standin:%s:%s" % (tenant, upn))),
            "businessPhones": extra.get("businessPhones", []), "displayName": name, "givenName": given,
            "jobTitle": extra.get("jobTitle"), "mail": mail, "mobilePhone": extra.get("mobilePhone"),
            "officeLocation": extra.get("officeLocation"), "preferredLanguage": extra.get("preferredLanguage"),
            "surname": surname, "userPrincipalName": upn, "userType": user_type, "accountEnabled": True}
    return user, account


def build_directory():
    """Each tenant's Graph users: (user object, the account it belongs to or None)."""
    directory = {key: [] for key in TENANTS}
    for upn, account in ACCOUNTS.items():
        home = account["home"]
        directory[home].append(graph_user(home, username(upn), account["name"], account["given"], account["surname"],
                                          account["mail"], account["oids"][home], account=upn,
                                          jobTitle="Analyst" if upn.startswith("ada") else None,
                                          businessPhones=["+1 555 0100"] if upn.startswith("ada") else []))
        for tenant, oid in account["oids"].items():
            if tenant != home:
                # A B2B guest's UPN in the resource tenant: mail with '@' as '_', #EXT#, and
                # the tenant's initial domain.
                guest_upn = "%s#EXT#@%s" % (upn.replace("@", "_"), TENANTS[tenant]["domains"][-1])
                directory[tenant].append(graph_user(tenant, guest_upn, account["name"], account["given"],
                                                    account["surname"], account["mail"], oid, "Guest", upn))
    for tenant, people in (
        ("contoso", [("adam", "Adam Smith", "Adam", "Smith"), ("adele", "Adele Vance", "Adele", "Vance"),
                     ("adrian", "Adrian Ford", "Adrian", "Ford"), ("adelaide", "Adelaide Byron", "Adelaide", "Byron"),
                     ("adalyn", "Adalyn Reyes", "Adalyn", "Reyes"), ("conan", "Conan O'Brien", "Conan", "O'Brien"),
                     ("zoe", "Zoë Åberg", "Zoë", "Åberg"), ("tom", "Tom & Jerry", "Tom", "& Jerry"),
                     # A name with a terminal escape in it, as fake-graph.py has.
                     ("mallory", "Mallory \u001b[31mRed", "Mallory", "Red")]),
        ("fabrikam", [("adaline", "Adaline Foster", "Adaline", "Foster"), ("dave", "Dave Lister", "Dave", "Lister")]),
    ):
        domain = TENANTS[tenant]["domains"][0]
        for alias, name, given, surname in people:
            upn = "%s@%s" % (alias, domain)
            directory[tenant].append(graph_user(tenant, upn, name, given, surname, upn))
    return directory


class SignInError(Exception):
    """An AADSTS error about who may sign in where."""

    def __init__(self, code, message, error="access_denied"):
        super().__init__(message)
        self.code, self.message, self.error = code, message, error


def resolve_tenant(segment):
    """('common'|'organizations'|'consumers'|'tenant', tenant key or None), or None if unknown.

    https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc (the
    {tenant} values: common, organizations, consumers, a tenant id or domain; "You can also
    use the consumer tenant GUID ... in place of consumers")."""
    value = segment.lower()
    if value in ("common", "organizations"):
        return value, None
    if value in ("consumers", CONSUMERS_TID):
        return "consumers", "consumers"
    for key, tenant in TENANTS.items():
        if key != "consumers" and (value == tenant["id"] or value in tenant["domains"]):
            return "tenant", key
    return None


def place(upn, segment):
    """(tenant key, oid, user type) of `upn` signing in at `segment`, or SignInError."""
    account = ACCOUNTS.get(upn.lower())
    if account is None:
        # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS50034
        # UserAccountNotFound.
        raise SignInError(50034, "The user account {EUII Hidden} does not exist in the directory. To sign into "
                                 "this application, the account must be added to the directory.")
    kind, target = resolve_tenant(segment)
    if kind == "common":
        # https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc: common takes work, school and
        # personal accounts: each signs in at their home tenant.
        key = account["home"]
    elif kind == "organizations":
        if account["kind"] == "personal":
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS500208 "if the
            # tenant is configured to allow only work or school accounts, and the user tries to sign in with a
            # personal Microsoft account".
            raise SignInError(500208, "The domain is not a valid login domain for the account type.")
        key = account["home"]
    elif kind == "consumers":
        if account["kind"] != "personal":
            raise SignInError(500208, "The domain is not a valid login domain for the account type.")
        key = "consumers"
    else:
        key = target
        if key not in account["oids"]:
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS50020
            # UserUnauthorized.
            raise SignInError(50020, "User account '{EUII Hidden}' from identity provider '%s' does not exist in "
                                     "tenant '%s' and cannot access the application in that tenant. This account "
                                     "needs to be added as an external user in the tenant first. Sign out and sign "
                                     "in again with a different Microsoft Entra user account."
                              % ("live.com" if account["kind"] == "personal" else
                                 "https://sts.windows.net/%s/" % TENANTS[account["home"]]["id"],
                                 TENANTS[key]["name"]))
    return key, account["oids"][key], "Member" if key == account["home"] else "Guest"


def redirect_matches(registered, given):
    """https://learn.microsoft.com/en-us/entra/identity-platform/reply-url#localhost-exceptions:
    for localhost the port is ignored; the path still has to match (a URI without a path
    is the same as with "/"); anything else matches exactly."""
    if registered == given:
        return True
    r, g = urllib.parse.urlsplit(registered), urllib.parse.urlsplit(given)
    if r.hostname != "localhost" or g.hostname is None or g.fragment:
        return False
    try:
        g.port  # noqa: B018 - a malformed port raises
    except ValueError:
        return False
    return (r.scheme == g.scheme and g.hostname.lower() == "localhost" and (r.path or "/") == (g.path or "/")
            and r.query == g.query)


class ScopeError(Exception):
    def __init__(self, error, code, message):
        super().__init__(message)
        self.error, self.code, self.message = error, code, message


def parse_scopes(text):
    """(OIDC scopes, Graph permissions, .default asked) from a scope parameter.

    https://learn.microsoft.com/en-us/entra/identity-platform/scopes-oidc: OIDC scopes,
    resource permissions (a Graph permission alone means Graph), RESOURCE/.default."""
    oidc, graph, default = set(), set(), False
    for item in text.split():
        low = item.lower()
        if low in OIDC_SCOPES:
            oidc.add(low)
            continue
        name = item
        for prefix in tuple(r + "/" for r in GRAPH_RESOURCES) + (GRAPH_APP_ID + "/",):
            if low.startswith(prefix):
                name = item[len(prefix):]
                break
        else:
            if "/" in item or ":" in item:
                resource = item.rsplit("/", 1)[0]
                # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS500011
                # InvalidResourceServicePrincipalNotFound.
                raise ScopeError("invalid_resource", 500011,
                                 "The resource principal named %s was not found in the tenant. This can happen if "
                                 "the application has not been installed by the administrator of the tenant or "
                                 "consented to by any user in the tenant. You might have sent your authentication "
                                 "request to the wrong tenant." % resource)
        if name.lower() == ".default":
            default = True
        elif name.lower() in CANONICAL:
            graph.add(CANONICAL[name.lower()])
        else:
            # https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow (Error response):
            # AADSTS70011, invalid_scope.
            raise ScopeError("invalid_scope", 70011, "The provided value for the input parameter 'scope' is not "
                                                     "valid. The scope %s is not valid." % item)
    return oidc, graph, default


def wants_cp1(claims):
    """Whether a claims request declares the client capability cp1.
    https://learn.microsoft.com/en-us/entra/identity-platform/claims-challenge ("Client
    capabilities": {"access_token":{"xms_cc":{"values":["cp1"]}}}; case-insensitive)."""
    try:
        values = claims["access_token"]["xms_cc"]["values"]
    except (KeyError, TypeError):
        return False
    return isinstance(values, list) and any(str(v).lower() == "cp1" for v in values)


# --- state -------------------------------------------------------------------------------


class State:
    def __init__(self, args, signer, base_url):
        self.lock = threading.Lock()
        self.signer = signer
        self.base_url = base_url
        self.host = urllib.parse.urlsplit(base_url).netloc
        GRAPH_RESOURCES.append("https://" + self.host)
        self.state_dir = args.state_dir
        self.directory = build_directory()
        self.settings = {
            "default_user": args.default_user,
            "access_token_lifetime": args.access_token_lifetime,
            "device_interval": args.device_interval,
            # https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-device-code: "the user has 15 minutes".
            "device_expires_in": 900,
            "device_slow_down": True,
            "graph_page_size": args.graph_page_size,
        }
        self.consented = {key: list(DEFAULT_CONSENT) for key in TENANTS}
        self.app_roles = {"contoso": ["User.Read.All"], "fabrikam": ["User.Read.All"], "consumers": []}
        self.redirect_uris = ["http://localhost"]
        self.client_secret = "standin~" + secrets.token_urlsafe(30)
        self.grants = {}  # (client, tenant key, upn) -> set of Graph permissions consented interactively
        self.codes = {}
        self.refresh = {}
        self.access = {}
        self.devices = {}
        self.valid_from = {}  # upn -> time of the last session revocation
        self.challenges = {}  # (tid, oid) -> (time, any_client)
        self.token_faults = {}  # grant -> [fault]
        self.authorize_faults = []
        self.graph_faults = []
        self.log_lock = threading.Lock()

    def clients(self):
        return {
            PUBLIC_CLIENT: {"name": "tokenctl (stand-in registration)", "public": True, "public_flows": True,
                            "redirects": self.redirect_uris, "secret": None},
            NO_DEVICE_CLIENT: {"name": "tokenctl without public client flows", "public": True,
                               "public_flows": False, "redirects": self.redirect_uris, "secret": None},
            CONFIDENTIAL_CLIENT: {"name": "tokenctl daemon (stand-in)", "public": False, "public_flows": False,
                                  "redirects": [], "secret": self.client_secret},
            SPA_CLIENT: {"name": "tokenctl registered as a single-page application", "public": True,
                         "public_flows": False, "redirects": self.redirect_uris, "secret": None, "spa": True},
            DISABLED_CLIENT: {"name": "tokenctl (disabled)", "public": True, "public_flows": True,
                              "redirects": self.redirect_uris, "secret": None, "disabled": True},
        }

    def effective_consent(self, client, tenant, upn):
        return set(self.consented[tenant]) | self.grants.get((client, tenant, upn), set())

    def pop_fault(self, queue):
        """The first fault of `queue` (a list), used once more; None if empty."""
        if not queue:
            return None
        fault = queue[0]
        fault["_left"] = fault.get("_left", int(fault.get("repeat", 1) or 1)) - 1
        if fault["_left"] <= 0:
            queue.pop(0)
        return fault

    def snapshot(self):
        def faults(queue):
            return [{k: v for k, v in f.items() if not k.startswith("_")} for f in queue]
        now = time.time()
        return {
            "settings": dict(self.settings),
            "consented": {k: sorted(v) for k, v in self.consented.items()},
            "app_roles": self.app_roles,
            "redirect_uris": self.redirect_uris,
            "next_token_errors": {g: faults(q) for g, q in self.token_faults.items() if q},
            "next_authorize_errors": faults(self.authorize_faults),
            "next_graph_errors": faults(self.graph_faults),
            "sessions_revoked": {upn: iso(t) for upn, t in self.valid_from.items()},
            "claims_challenges": [{"tid": k[0], "oid": k[1], "since": iso(v[0])} for k, v in self.challenges.items()],
            "counts": {
                "access_tokens": len(self.access),
                "access_tokens_valid": sum(1 for r in self.access.values() if r["exp"] > now),
                "refresh_tokens": len(self.refresh),
                "refresh_tokens_usable": sum(1 for r in self.refresh.values()
                                             if not r["revoked"] and not r["expired"]
                                             and r["issued"] >= self.valid_from.get(r["upn"], 0)),
                "codes": len(self.codes), "device_codes": len(self.devices),
            },
            "refresh_tokens_by_user": self._by_user(),
        }

    def _by_user(self):
        counts = {}
        for record in self.refresh.values():
            counts[record["upn"]] = counts.get(record["upn"], 0) + 1
        return counts

    def log(self, name, line):
        with self.log_lock:
            with open(os.path.join(self.state_dir, name), "a", encoding="utf-8") as handle:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")


class Reply(Exception):
    """Thrown to answer at once: (status, JSON body or bytes, headers, content type)."""

    def __init__(self, status, body, headers=(), content_type="application/json; charset=utf-8"):
        super().__init__(status)
        self.status, self.body, self.headers, self.content_type = status, body, list(headers), content_type


# --- the HTTP handler --------------------------------------------------------------------

TENANT_ROUTE = re.compile(r"^/(?P<tenant>[^/]+)/(?P<rest>v2\.0/\.well-known/openid-configuration|"
                          r"discovery/v2\.0/keys|oauth2/v2\.0/(?:authorize|token|devicecode|logout))$")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "microsoft-identity-platform-standin/1"
    timeout = 30

    def log_message(self, *args):
        pass

    @property
    def state(self):
        return self.server.state

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def do_PATCH(self):
        self.dispatch()

    # Replies.

    def send(self, status, body, headers=(), content_type="application/json; charset=utf-8"):
        data = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
        line = {"time": now_text(), "method": self.command, "path": self.route, "status": status}
        fields = {k: v for k, v in {**self.query, **self.form}.items() if k in LOGGED_FIELDS}
        if fields:
            line["fields"] = fields
        line.update(self.notes)
        # Logged before answering: a test reads the log as soon as it has its answer.
        self.state.log("requests.log", line)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store, no-cache")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def token_client(self, client_id, segment):
        """The registered client `client_id`, for the token and device endpoints: AADSTS700016 for an unknown one
        (https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow, token errors:
        unauthorized_client; https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes
        AADSTS700016), AADSTS7000112 for a disabled one."""
        with self.state.lock:
            client = self.state.clients().get(client_id)
        if client is None:
            self.sts_error("unauthorized_client", 700016, "Application with identifier '%s' was not found in the "
                                                          "directory '%s'." % (client_id, segment))
        self.refuse_disabled(client_id, client)
        return client

    def refuse_disabled(self, client_id, client):
        """AADSTS7000112: no token or device code for an app disabled in its tenant."""
        if client.get("disabled"):
            self.sts_error("unauthorized_client", 7000112, "Application '%s'(%s) is disabled."
                           % (client_id, client["name"]))

    def sts_error(self, error, code, message, status=400, extra=None, headers=()):
        """An error in the shape of
        https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes
        (Handling error codes: error, error_description with Trace ID, Correlation ID and
        Timestamp lines, error_codes, timestamp, trace_id, correlation_id, error_uri)."""
        trace, correlation, stamp = str(uuid.uuid4()), self.correlation_id(), \
            time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime())
        prefix = "AADSTS%d: " % code if code else ""
        body = {"error": error,
                "error_description": "%s%s\r\nTrace ID: %s\r\nCorrelation ID: %s\r\nTimestamp: %s"
                                     % (prefix, message, trace, correlation, stamp),
                "error_codes": [code] if code else [], "timestamp": stamp, "trace_id": trace,
                "correlation_id": correlation}
        if code:
            body["error_uri"] = "%s/error?code=%d" % (self.state.base_url, code)
        body.update(extra or {})
        self.notes.update({"error": error, "aadsts": code})
        raise Reply(status, body, headers)

    def correlation_id(self):
        # Entra echoes a client's client-request-id as the correlation id.
        given = self.headers.get("client-request-id", "")
        return given if re.fullmatch(r"[0-9a-fA-F-]{36}", given) else str(uuid.uuid4())

    def page(self, status, title, text, code=None):
        body = ("<!DOCTYPE html>\n<html><head><title>%s</title></head><body><h1>%s</h1><p id=\"message\">%s</p>"
                % (html.escape(title), html.escape(title), html.escape(text)))
        if code:
            body += "<p id=\"aadsts\">AADSTS%d</p>" % code
            self.notes.update({"aadsts": code})
        body += "</body></html>\n"
        raise Reply(status, body.encode(), content_type="text/html; charset=utf-8")

    # Dispatch.

    def dispatch(self):
        self.notes = {}
        self.form = {}
        parts = urllib.parse.urlsplit(self.path)
        self.route = parts.path
        self.query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        try:
            if length < 0 or length > MAX_BODY:
                self.close_connection = True
                raise Reply(413, {"error": "invalid_request", "error_description": "request body too large"})
            self.body = self.rfile.read(length) if length else b""
            if self.command == "POST" and "form-urlencoded" in (self.headers.get("Content-Type") or ""):
                self.form = dict(urllib.parse.parse_qsl(self.body.decode("utf-8", "replace"),
                                                        keep_blank_values=True))
            self.route_request()
            raise Reply(404, {"error": {"code": "NotFound", "message": "No such endpoint on the stand-in."}})
        except Reply as reply:
            self.send(reply.status, reply.body, reply.headers, reply.content_type)
        except (ConnectionError, ssl.SSLError, TimeoutError):
            self.close_connection = True
        except Exception as error:  # never echo the error's text: it could hold a token
            print("microsoft-identity-platform.py: internal error %s" % type(error).__name__, file=sys.stderr)
            self.notes["internal_error"] = type(error).__name__
            try:
                self.send(500, {"error": "server_error", "error_description": "stand-in internal error"})
            except OSError:
                pass

    def route_request(self):
        path = self.route
        match = TENANT_ROUTE.match(path)
        if match:
            segment, rest = urllib.parse.unquote(match.group("tenant")), match.group("rest")
            self.notes["tenant"] = segment
            if rest.endswith("openid-configuration"):
                self.require("GET")
                self.openid_configuration(segment)
            if rest.endswith("keys"):
                self.require("GET")
                self.keys(segment)
            if rest.endswith("authorize"):
                self.require("GET", "POST")
                self.authorize(segment)
            if rest.endswith("logout"):
                self.page(200, "Signed out", "You signed out of your account.")
            if rest.endswith("token"):
                if self.command != "POST":
                    # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS900561.
                    self.sts_error("invalid_request", 900561, "The endpoint only accepts POST, OPTIONS requests. "
                                                              "Received a %s request." % self.command)
                self.token(segment)
            if rest.endswith("devicecode"):
                self.require("POST")
                self.devicecode(segment)
        if path == "/devicelogin":
            self.require("GET", "POST")
            self.devicelogin()
        if path == "/error":
            self.error_page()
        if path.startswith("/v1.0/") or path == "/v1.0" or path == "/oidc/userinfo":
            self.graph()
        if path == "/_test/control":
            self.control()
        if path == "/_test/state":
            raise Reply(200, self.locked_snapshot())

    def require(self, *methods):
        if self.command in methods:
            return
        if self.route.startswith(("/v1.0", "/oidc/")):
            # The live Graph's answer to a method a resource does not take.
            self.graph_error(405, "Request_BadRequest", "Specified HTTP method is not allowed for the request target.",
                             [("Allow", ", ".join(methods))])
        raise Reply(405, {"error": "invalid_request", "error_description": "method not allowed"},
                    [("Allow", ", ".join(methods))])

    def locked_snapshot(self):
        with self.state.lock:
            return self.state.snapshot()

    # Discovery.

    def tenant_or_error(self, segment, json_error=True):
        resolved = resolve_tenant(segment)
        if resolved is None:
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS90002
            # InvalidTenantName.
            message = ("Tenant '%s' not found. Check to make sure you have the correct tenant ID and are signing "
                       "into the correct cloud. Check with your subscription administrator, this may happen if "
                       "there are no active subscriptions for the tenant." % segment)
            if json_error:
                self.sts_error("invalid_tenant" if self.route.endswith(("configuration", "keys")) else
                               "invalid_request", 90002, message)
            self.page(400, "Sign in", message, 90002)
        return resolved

    def issuer(self, tid):
        # https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference ("iss": for v2.0 tokens
        # the URI ends in /v2.0).
        return "https://%s/%s/v2.0" % (self.state.host, tid)

    def openid_configuration(self, segment):
        """https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc (Fetch
        the OpenID configuration document): for common and organizations the issuer has
        the {tenantid} placeholder; for a tenant (id or domain) the endpoints name its id."""
        kind, key = self.tenant_or_error(segment)
        if kind == "tenant" or key == "consumers":
            issuer_tid = TENANTS[key]["id"]
            path_tenant = TENANTS[key]["id"] if kind == "tenant" else segment.lower()
        else:
            issuer_tid, path_tenant = "{tenantid}", kind
        base = "https://%s/%s" % (self.state.host, path_tenant)
        raise Reply(200, {
            "token_endpoint": base + "/oauth2/v2.0/token",
            "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt", "client_secret_basic"],
            "jwks_uri": base + "/discovery/v2.0/keys",
            "response_modes_supported": ["query", "fragment", "form_post"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "issuer": self.issuer(issuer_tid),
            "request_uri_parameter_supported": False,
            "userinfo_endpoint": "https://%s/oidc/userinfo" % self.state.host,
            "authorization_endpoint": base + "/oauth2/v2.0/authorize",
            "device_authorization_endpoint": base + "/oauth2/v2.0/devicecode",
            "http_logout_supported": True,
            "frontchannel_logout_supported": True,
            "end_session_endpoint": base + "/oauth2/v2.0/logout",
            "claims_supported": ["sub", "iss", "cloud_instance_name", "cloud_instance_host_name", "cloud_graph_host_name",
                                 "msgraph_host", "aud", "exp", "iat", "auth_time", "acr", "nonce", "preferred_username",
                                 "name", "tid", "ver", "at_hash", "c_hash", "email"],
            "kerberos_endpoint": base + "/kerberos",
            "tenant_region_scope": None,
            "cloud_instance_name": "microsoftonline.com",
            "cloud_graph_host_name": "graph.windows.net",
            "msgraph_host": self.state.host,
            "rbac_url": "https://pas.windows.net",
        })

    def keys(self, segment):
        kind, key = self.tenant_or_error(segment)
        jwk = self.state.signer.jwk()
        jwk["issuer"] = self.issuer(TENANTS[key]["id"] if key else "{tenantid}")
        raise Reply(200, {"keys": [jwk]})

    # Authorization endpoint.

    def browser_session(self):
        """The scripted browser's cookies: who is at the keyboard, and whether they decline."""
        cookies = {}
        for part in (self.headers.get("Cookie") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name:
                cookies[name] = urllib.parse.unquote(value)
        return cookies.get("standin_user") or None, cookies.get("standin_consent", "allow")

    def picked_kind(self):
        """work or personal: which of an address's two accounts the person picks."""
        for part in (self.headers.get("Cookie") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == "standin_kind":
                return value
        return "work"

    def session_user(self):
        """The account the browser is already signed in to Microsoft as, if any."""
        for part in (self.headers.get("Cookie") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == "standin_session" and value:
                return urllib.parse.unquote(value).lower()
        return None

    def who_signs_in(self, q, cookie_user):
        """The user an interactive request signs in.

        https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow (prompt: "prompt=login
        forces the user to enter their credentials on that request, negating single-sign on ... prompt=select_account
        interrupts single sign-on providing account selection experience listing all the accounts either in session
        or any remembered account"; login_hint: pre-fills the username): without a prompt, a browser signed in as
        the hinted user, or signed in with no hint sent, is signed in again without the person being asked."""
        session = self.session_user()
        hint = (q.get("login_hint") or "").lower()
        if session and not q.get("prompt") and hint in ("", session):
            return session
        return (cookie_user or hint or session or self.state.settings["default_user"]).lower()

    def authorize(self, segment):
        """https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow
        (Request an authorization code)."""
        q = dict(self.query)
        if self.command == "POST":
            q.update(self.form)
        entry = {"time": now_text(), "tenant": segment, "query": q}
        try:
            self.authorize_inner(segment, q, entry)
        finally:
            self.state.log("authorize.log", entry)

    def authorize_inner(self, segment, q, entry):
        state = self.state
        resolved = resolve_tenant(segment)
        if resolved is None:
            entry["outcome"] = "page: AADSTS90002"
            self.tenant_or_error(segment, json_error=False)
        client_id = q.get("client_id", "")
        with state.lock:
            client = state.clients().get(client_id)
            registered = list(client["redirects"]) if client else []
        if client is None:
            entry["outcome"] = "page: AADSTS700016"
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS700016
            # UnauthorizedClient_DoesNotMatchRequest.
            self.page(400, "Sign in", "Application with identifier '%s' was not found in the directory '%s'. This "
                                      "can happen if the application has not been installed by the administrator of "
                                      "the tenant or consented to by any user in the tenant. You may have sent your "
                                      "authentication request to the wrong tenant."
                      % (client_id, TENANTS[resolved[1]]["name"] if resolved[1] else segment), 700016)
        if not registered:
            entry["outcome"] = "page: AADSTS900971"
            self.page(400, "Sign in", "No reply address provided.", 900971)
        # https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc ("redirect_uri ... If not
        # present, the endpoint will pick one registered redirect_uri").
        redirect = q.get("redirect_uri") or registered[0]
        if not any(redirect_matches(r, redirect) for r in registered):
            entry["outcome"] = "page: AADSTS50011"
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS50011
            # InvalidReplyTo; shown on Microsoft's page, never sent to an address that is not registered ("If the
            # redirect URI the application sent doesn't match any of the redirect URIs in Microsoft Entra ID, error
            # AADSTS50011 will be returned. If the values match, Microsoft Entra ID sends the user to the redirect
            # URI", https://learn.microsoft.com/en-us/troubleshoot/azure/active-directory/error-code-aadsts50011-redirect-uri-mismatch).
            self.page(400, "Sign in", "The redirect URI '%s' specified in the request does not match the redirect "
                                      "URIs configured for the application '%s'. Make sure the redirect URI sent in "
                                      "the request matches one added to your application in the Azure portal."
                      % (redirect, client_id), 50011)
        mode = q.get("response_mode") or "query"
        if mode not in ("query", "fragment", "form_post"):
            mode = "query"
            self.authorize_error(entry, redirect, "query", q, "invalid_request", 70007,
                                 "The application returned an unsupported response mode.")

        def fail(error, code, message):
            self.authorize_error(entry, redirect, mode, q, error, code, message)

        response_type = q.get("response_type", "")
        if not response_type:
            fail("invalid_request", 900144, "The request body must contain the following parameter: "
                                            "'response_type'.")
        if set(response_type.split()) != {"code"}:
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS700054 (id_token
            # not enabled), AADSTS70005.
            if "id_token" in response_type.split():
                fail("unsupported_response_type", 700054, "response_type 'id_token' is not enabled for the "
                                                          "application.")
            fail("unsupported_response_type", 70005, "The provided value for the input parameter 'response_type' "
                                                     "is not allowed for this request. Expected value is 'code'.")
        if not q.get("scope"):
            fail("invalid_request", 900144, "The request body must contain the following parameter: 'scope'.")
        try:
            oidc, graph, default = parse_scopes(q["scope"])
        except ScopeError as error:
            fail(error.error, error.code, error.message)
        challenge, method = q.get("code_challenge"), q.get("code_challenge_method")
        if method and not challenge:
            fail("invalid_request", 900144, "The request body must contain the following parameter: "
                                            "'code_challenge'.")
        if challenge:
            # https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow: S256 or plain (plain
            # when the method is left out).
            method = method or "plain"
            if method not in ("S256", "plain"):
                fail("invalid_request", 501491, "Invalid code_challenge_method.")
            if not (43 <= len(challenge) <= 128) or (method == "S256" and len(challenge) != 43):
                # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS501491
                # InvalidCodeChallengeMethodInvalidSize.
                fail("invalid_request", 501491, "Invalid size of Code_Challenge parameter.")
        claims = None
        if q.get("claims"):
            try:
                claims = json.loads(q["claims"])
                if not isinstance(claims, dict):
                    raise ValueError
            except ValueError:
                # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS90100
                # InvalidRequestParameter.
                fail("invalid_request", 90100, "claims parameter is empty or not valid.")
        with state.lock:
            fault = state.pop_fault(state.authorize_faults)
        if fault:
            kind = fault.get("kind")
            # https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow (Error codes for
            # authorization endpoint errors: login_required, interaction_required);
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes for the codes.
            known = {
                "interaction_required": ("interaction_required", 50076, "Due to a configuration change made by your "
                                         "administrator, or because you moved to a new location, you must use "
                                         "multi-factor authentication to access '%s'." % GRAPH_APP_ID),
                "login_required": ("login_required", 50058, "A silent sign-in request was sent but no user is "
                                   "signed in."),
                "consent_required": ("consent_required", 65001, "The user or administrator has not consented to use "
                                     "the application with ID '%s'. Send an interactive authorization request for "
                                     "this user and resource." % client_id),
                "access_denied": ("access_denied", 65004, "User declined to consent to access the app."),
            }
            error, code, message = known.get(kind, known["interaction_required"])
            fail(fault.get("error", error), code, fault.get("description", message))
        if q.get("prompt") == "none" and not self.session_user():
            # https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow (prompt=none: "If the
            # request can't be completed silently by using single-sign on", an error is returned to the redirect URI):
            # a browser signed in to no one signs no one in; AADSTS50058 UserInformationNotProvided ("a user isn't
            # signed in", https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes).
            fail("login_required", 50058, "A silent sign-in request was sent but no user is signed in.")
        cookie_user, consent = self.browser_session()
        with state.lock:
            upn = choose_twin(self.who_signs_in(q, cookie_user), segment, q.get("domain_hint"), self.picked_kind())
        try:
            key, oid, user_type = place(upn, segment)
        except SignInError as error:
            fail(error.error, error.code, error.message)
        with state.lock:
            granted = state.effective_consent(client_id, key, upn)
            tenant_consent = set(state.consented[key])
        needed = graph - granted
        if consent == "deny":
            # https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow (Error response:
            # access_denied, "the user canceled");
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS65004
            # UserDeclinedConsent.
            fail("access_denied", 65004, "User declined to consent to access the app.")
        if needed & ADMIN_ONLY - tenant_consent:
            if q.get("prompt") == "none":
                fail("consent_required", 65001, "The user or administrator has not consented to use the application "
                                                "with ID '%s'. Send an interactive authorization request for this user "
                                                "and resource." % client_id)
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS90094
            # AdminConsentRequired.
            fail("access_denied", 90094, "The grant requires admin permission.")
        if needed and q.get("prompt") == "none":
            fail("consent_required", 65001, "The user or administrator has not consented to use the application "
                                            "with ID '%s'. Send an interactive authorization request for this user and "
                                            "resource." % client_id)
        code = "1.AS" + secrets.token_urlsafe(48)
        with state.lock:
            if needed:
                state.grants.setdefault((client_id, key, upn), set()).update(needed)
            state.codes[code] = {
                "client": client_id, "redirect": redirect, "challenge": challenge, "method": method,
                "scope": q["scope"], "nonce": q.get("nonce"), "segment": segment.lower(), "tenant": key,
                "upn": upn, "oid": oid, "claims": claims, "expires": time.time() + 600, "used": False,
            }
        entry["outcome"] = {"user": upn, "tenant": key, "tid": TENANTS[key]["id"], "oid": oid, "user_type": user_type,
                            "result": "code"}
        self.notes.update({"user": upn, "tid": TENANTS[key]["id"]})
        params = {"code": code}
        if "state" in q:
            params["state"] = q["state"]
        params["session_state"] = str(uuid.uuid4())
        self.deliver(redirect, params, mode)

    def authorize_error(self, entry, redirect, mode, q, error, code, message):
        """https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow (Error response: error
        and error_description sent to the
        redirect_uri)."""
        trace, stamp = str(uuid.uuid4()), time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime())
        params = {"error": error,
                  "error_description": "AADSTS%d: %s\r\nTrace ID: %s\r\nCorrelation ID: %s\r\nTimestamp: %s"
                                       % (code, message, trace, self.correlation_id(), stamp),
                  "error_uri": "%s/error?code=%d" % (self.state.base_url, code)}
        if "state" in q:
            params["state"] = q["state"]
        entry["outcome"] = {"result": "error", "error": error, "aadsts": code}
        self.notes.update({"error": error, "aadsts": code})
        self.deliver(redirect, params, mode)

    def deliver(self, redirect, params, mode):
        # https://learn.microsoft.com/en-us/entra/identity-platform/reply-url: a redirect URI without a path is
        # returned with a trailing slash.
        parts = urllib.parse.urlsplit(redirect)
        if not parts.path:
            redirect = urllib.parse.urlunsplit(parts._replace(path="/"))
        encoded = urllib.parse.urlencode(params, quote_via=urllib.parse.quote)
        if mode == "form_post":
            inputs = "".join('<input type="hidden" name="%s" value="%s"/>' % (html.escape(k), html.escape(v))
                             for k, v in params.items())
            body = ('<!DOCTYPE html>\n<html><head><title>Working...</title></head><body onload="document.forms[0]'
                    '.submit()"><form method="POST" name="hiddenform" action="%s">%s<noscript><p>Script is disabled. '
                    'Click Submit to continue.</p><input type="submit" value="Submit"/></noscript></form></body>'
                    '</html>\n' % (html.escape(redirect), inputs))
            raise Reply(200, body.encode(), content_type="text/html; charset=utf-8")
        if mode == "fragment":
            location = redirect + "#" + encoded
        else:
            location = redirect + ("&" if parts.query else "?") + encoded
        raise Reply(302, b"", [("Location", location)], "text/html; charset=utf-8")

    # Token endpoint.

    def token(self, segment):
        form = self.form
        resolved = self.tenant_or_error(segment)
        grant = form.get("grant_type", "")
        self.notes["grant_type"] = grant
        if not grant:
            self.sts_error("invalid_request", 900144, "The request body must contain the following parameter: "
                                                      "'grant_type'.")
        basic_id = basic_secret = None
        authorization = self.headers.get("Authorization", "")
        if authorization[:6].lower() == "basic ":
            try:
                decoded = base64.b64decode(authorization[6:].strip(), validate=True).decode()
                raw_id, _, raw_secret = decoded.partition(":")
                # RFC 6749 §2.3.1: both parts form-encoded first.
                basic_id = urllib.parse.unquote_plus(raw_id)
                basic_secret = urllib.parse.unquote_plus(raw_secret)
            except (ValueError, UnicodeDecodeError):
                self.sts_error("invalid_client", 7000215, "Invalid client secret provided.", 401)
        client_id = form.get("client_id") or basic_id or ""
        if not client_id:
            self.sts_error("invalid_request", 900144, "The request body must contain the following parameter: "
                                                      "'client_id'.")
        if basic_id is not None and form.get("client_id") and basic_id != form["client_id"]:
            self.sts_error("invalid_client", 7000215, "Invalid client secret provided.", 401)
        client = self.token_client(client_id, segment)
        secret = form.get("client_secret") or basic_secret
        presented = secret or form.get("client_assertion")
        if client["public"]:
            if presented:
                # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS700025
                # InvalidClientPublicClientWithCredential.
                self.sts_error("invalid_client", 700025, "Client is public so neither 'client_assertion' nor "
                                                         "'client_secret' should be presented.", 401)
            if grant == "client_credentials" or (grant == DEVICE_GRANT and not client["public_flows"]):
                # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS7000218: with
                # "Allow public client flows" off the app is a confidential client for the device grant, and must
                # authenticate (allowPublicClient, "the fallback application type" where the redirect cannot tell,
                # https://learn.microsoft.com/en-us/entra/identity-platform/reference-app-manifest). When in a device
                # sign-in Microsoft answers so is not documented (reports have it after the person signs in), so no
                # client may rely on asking with a code nobody entered.
                self.sts_error("invalid_client", 7000218, "The request body must contain the following parameter: "
                                                          "'client_assertion' or 'client_secret'.", 401)
        else:
            if not presented:
                self.sts_error("invalid_client", 7000218, "The request body must contain the following parameter: "
                                                          "'client_assertion' or 'client_secret'.", 401)
            if secret != client["secret"]:
                # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS7000215.
                self.sts_error("invalid_client", 7000215, "Invalid client secret provided. Ensure the secret being "
                                                          "sent in the request is the client secret value, not the "
                                                          "client secret ID, for a secret added to app '%s'."
                               % client_id, 401)
        if client.get("spa") and grant in ("authorization_code", "refresh_token") and not self.headers.get("Origin"):
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS9002327, a code or
            # refresh token of a single-page application redeemed without a browser's cross-origin request.
            self.sts_error("invalid_request", 9002327, "Tokens issued for the 'Single-Page Application' client-type "
                                                       "may only be redeemed via cross-origin requests.")
        self.scripted_token_fault(grant, form)
        if grant == "authorization_code":
            self.redeem_code(segment, resolved, client_id, client)
        if grant == "refresh_token":
            self.redeem_refresh(segment, client_id, client)
        if grant == DEVICE_GRANT:
            self.redeem_device(segment, client_id, client)
        if grant == "client_credentials":
            self.client_credentials(segment, resolved, client_id)
        # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS70003
        # UnsupportedGrantType.
        self.sts_error("unsupported_grant_type", 70003, "The app requested an unsupported grant type '%s'." % grant)

    def scripted_token_fault(self, grant, form):
        state = self.state
        short = "device_code" if grant == DEVICE_GRANT else grant
        with state.lock:
            fault = state.pop_fault(state.token_faults.get(short)) or state.pop_fault(state.token_faults.get("any"))
            if fault and fault.get("kind") in ("expired", "revoked") and form.get("refresh_token") in state.refresh:
                # The presented refresh token stays dead, as a real expired or revoked one would.
                state.refresh[form["refresh_token"]]["expired" if fault["kind"] == "expired" else "revoked"] = True
        if not fault:
            return
        self.notes["scripted"] = fault.get("kind")
        kind = fault.get("kind")
        # https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow (Error codes for token
        # endpoint errors) and https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes for
        # each AADSTS code.
        table = {
            "interaction_required": (400, "interaction_required", 50076,
                                     "Due to a configuration change made by your administrator, or because you moved "
                                     "to a new location, you must use multi-factor authentication to access '%s'."
                                     % GRAPH_APP_ID, {}),
            "consent_required": (400, "invalid_grant", 65001,
                                 "The user or administrator has not consented to use the application with ID '%s'. "
                                 "Send an interactive authorization request for this user and resource."
                                 % form.get("client_id", ""), {"suberror": "consent_required"}),
            "login_required": (400, "invalid_grant", 50058,
                               "Session information is not sufficient for single-sign-on.", {}),
            "expired": (400, "invalid_grant", 70008,
                        "The provided authorization code or refresh token has expired due to inactivity. Send a new "
                        "interactive authorization request for this user and resource.", {}),
            "revoked": (400, "invalid_grant", 50173,
                        "The provided grant has expired due to it being revoked, a fresh auth token is needed. The "
                        "user might have changed or reset their password.", {}),
            "temporarily_unavailable": (503, "temporarily_unavailable", 90006,
                                        "The service is temporarily unavailable.", {}),
            "throttled": (429, "temporarily_unavailable", 90055, "There are too many incoming requests.", {}),
            "server_error": (500, "server_error", 50000, "There was an error issuing a token.", {}),
        }
        status, error, code, message, extra = table.get(kind, table["server_error"])
        extra = dict(extra)
        for name in ("suberror", "claims"):
            if name in fault:
                extra[name] = fault[name]
        headers = []
        if status in (429, 503):
            retry = fault.get("retry_after", 1)
            if retry is not None:
                headers.append(("Retry-After", str(retry)))
        self.sts_error(fault.get("error", error), code, fault.get("description", message),
                       int(fault.get("status", status)), extra, headers)

    def parse_claims(self, text):
        if not text:
            return None
        try:
            claims = json.loads(text)
            if isinstance(claims, dict):
                return claims
        except ValueError:
            pass
        self.sts_error("invalid_request", 90100, "claims parameter is empty or not valid.")

    def consented_scopes(self, scope_text, client_id, key, upn):
        """(oidc, Graph permissions) a token may carry, or the consent error: refresh
        tokens "are valid for all permissions that your client has already received consent
        for" (https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow, Refresh the
        access token)."""
        try:
            oidc, graph, default = parse_scopes(scope_text)
        except ScopeError as error:
            self.sts_error(error.error, error.code, error.message)
        with self.state.lock:
            granted = self.state.effective_consent(client_id, key, upn)
        if default:
            # https://learn.microsoft.com/en-us/entra/identity-platform/scopes-oidc (The .default scope): every
            # permission consented to.
            graph |= granted
        missing = graph - granted
        if missing:
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS65001
            # DelegationDoesNotExist; the token endpoint says invalid_grant with suberror consent_required.
            self.notes["missing_consent"] = sorted(missing)
            self.sts_error("invalid_grant", 65001, "The user or administrator has not consented to use the application "
                                                   "with ID '%s' named '%s'. Send an interactive authorization request "
                                                   "for this user and resource."
                           % (client_id, self.state.clients()[client_id]["name"]),
                           extra={"suberror": "consent_required"})
        return oidc, graph

    def redeem_code(self, segment, resolved, client_id, client):
        """https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow (Redeem a code for
        an access token)."""
        state = self.state
        form = self.form
        code = form.get("code")
        if not code:
            self.sts_error("invalid_request", 900144, "The request body must contain the following parameter: 'code'.")
        with state.lock:
            record = state.codes.get(code)
            if record and not record["used"] and record["client"] == client_id:
                record["used"] = True
                fresh = True
            else:
                fresh = False
        if record is None:
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS9002313
            # InvalidRequest (malformed or invalid).
            self.sts_error("invalid_grant", 9002313, "Invalid request. Request is malformed or invalid.")
        if record["client"] != client_id:
            self.sts_error("invalid_grant", 70000, "Provided grant is invalid or malformed.")
        if not fresh:
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS54005.
            self.sts_error("invalid_grant", 54005, "OAuth2 Authorization code was already redeemed, please retry with "
                                                   "a new valid code or use an existing refresh token.")
        if time.time() > record["expires"]:
            # https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow: codes "expire after
            # about 10 minutes".
            self.sts_error("invalid_grant", 70008, "The provided authorization code or refresh token has expired due "
                                                   "to inactivity. Send a new interactive authorization request for "
                                                   "this user and resource.")
        kind, key = resolved
        if segment.lower() != record["segment"] and not (kind == "tenant" and key == record["tenant"]):
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS700005
            # InvalidGrantRedeemAgainstWrongTenant.
            self.sts_error("invalid_grant", 700005, "Provided Authorization Code is intended to use against other "
                                                    "tenant, thus rejected.")
        if form.get("redirect_uri") != record["redirect"]:
            # The live service's AADSTS500112 (the reply address differs from the one the code was requested with);
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes lists only AADSTS50011.
            self.sts_error("invalid_grant", 500112, "The reply address '%s' does not match the reply address '%s' "
                                                    "provided when requesting Authorization code."
                           % (form.get("redirect_uri", ""), record["redirect"]))
        if record["challenge"]:
            verifier = form.get("code_verifier", "")
            expected = (b64url(hashlib.sha256(verifier.encode()).digest()) if record["method"] == "S256"
                        else verifier)
            if not verifier or not secrets.compare_digest(expected, record["challenge"]):
                # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS501481.
                self.sts_error("invalid_grant", 501481, "The Code_Verifier does not match the code_challenge "
                                                        "supplied in the authorization request.")
        claims = self.parse_claims(form.get("claims")) or record["claims"]
        upn, key = record["upn"], record["tenant"]
        oidc, graph = self.consented_scopes(form.get("scope") or record["scope"], client_id, key, upn)
        original_oidc = parse_scopes(record["scope"])[0]
        self.issue(client_id, key, upn, record["oid"], oidc | {o for o in original_oidc if o == "openid"}, graph,
                   claims, record["nonce"], refresh="offline_access" in original_oidc | oidc,
                   refresh_scope=record["scope"])

    def redeem_refresh(self, segment, client_id, client):
        """https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow (Refresh the access
        token); https://learn.microsoft.com/en-us/entra/identity-platform/refresh-tokens: "Refresh
        tokens are bound to a combination of user and client, but aren't tied to a resource
        or tenant."""
        state = self.state
        form = self.form
        token = form.get("refresh_token")
        if not token:
            self.sts_error("invalid_request", 900144, "The request body must contain the following parameter: "
                                                      "'refresh_token'.")
        with state.lock:
            record = state.refresh.get(token)
            record = dict(record) if record else None
            valid_from = state.valid_from.get(record["upn"], 0) if record else 0
        if record is None:
            self.sts_error("invalid_grant", 9002313, "Invalid request. Request is malformed or invalid.")
        self.notes["user"] = record["upn"]
        if record["client"] != client_id:
            self.sts_error("invalid_grant", 70000, "Provided grant is invalid or malformed.")
        if record["expired"]:
            self.sts_error("invalid_grant", 70008, "The provided authorization code or refresh token has expired due "
                                                   "to inactivity. Send a new interactive authorization request for "
                                                   "this user and resource.")
        if record["revoked"] or record["issued"] < valid_from:
            # https://learn.microsoft.com/en-us/entra/identity-platform/refresh-tokens (Token revocation: "Admin
            # revokes all refresh tokens for a user": revoked);
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes AADSTS50173
            # FreshTokenNeeded.
            self.sts_error("invalid_grant", 50173, "The provided grant has expired due to it being revoked, a fresh "
                                                   "auth token is needed. The user might have changed or reset their "
                                                   "password. The grant was issued on '%s' and the TokensValidFrom date "
                                                   "(before which tokens are not valid) for this user is '%s'."
                           % (iso(record["issued"]), iso(valid_from or record["issued"])))
        claims = self.parse_claims(form.get("claims"))
        try:
            key, oid, _ = place(record["upn"], segment)
        except SignInError as error:
            self.sts_error("invalid_grant", error.code, error.message)
        oidc, graph = self.consented_scopes(form.get("scope") or record["scope"], client_id, key, record["upn"])
        # https://learn.microsoft.com/en-us/entra/identity-platform/refresh-tokens: "Refresh tokens replace themselves
        # with a fresh token upon every use. The Microsoft identity platform doesn't revoke old refresh tokens".
        self.issue(client_id, key, record["upn"], oid, oidc, graph, claims, None, refresh=True,
                   refresh_scope=record["scope"])

    def redeem_device(self, segment, client_id, client):
        """https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-device-code
        (Authenticating the user; Expected errors)."""
        state = self.state
        code = self.form.get("device_code")
        if not code:
            self.sts_error("invalid_request", 900144, "The request body must contain the following parameter: "
                                                      "'device_code'.")
        now = time.time()
        with state.lock:
            record = state.devices.get(code)
            if record is None or record["client"] != client_id or record["segment"] != segment.lower():
                outcome = "unknown"
            elif record["status"] == "redeemed":
                outcome = "unknown"
            elif now > record["expires"]:
                outcome = "expired"
            elif (state.settings["device_slow_down"] and record["last_poll"] is not None
                  and now - record["last_poll"] < record["interval"] - 0.25):
                outcome = "slow_down"
            else:
                outcome = record["status"]
            if record is not None and outcome != "slow_down":
                record["last_poll"] = now
            if outcome == "approved":
                record["status"] = "redeemed"
                record = dict(record)
        if outcome == "unknown":
            # "bad_verification_code: The device_code sent to the /token endpoint wasn't recognized";
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes AADSTS70018
            # BadVerificationCode.
            self.sts_error("bad_verification_code", 70018, "Invalid verification code.")
        if outcome == "expired":
            # "expired_token"; https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes
            # AADSTS70019 CodeExpired.
            self.sts_error("expired_token", 70019, "Verification code expired.")
        if outcome == "slow_down":
            # Not in Microsoft's list of expected errors: RFC 8628 §3.5's slow_down, which
            # Microsoft documents no AADSTS code for.
            self.sts_error("slow_down", None, "The client is polling too frequently; wait at least interval seconds "
                                              "between requests.")
        if outcome == "pending":
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS70016
            # AuthorizationPending.
            self.sts_error("authorization_pending", 70016, "OAuth 2.0 device flow error. Authorization is pending. "
                                                           "Continue polling.")
        if outcome == "declined":
            # "authorization_declined: The end user denied the authorization request";
            # Microsoft documents no code of its own for it: AADSTS65004 UserDeclinedConsent.
            self.sts_error("authorization_declined", 65004, "The user declined to authorize the request.")
        self.notes["user"] = record["upn"]
        oidc, graph = self.consented_scopes(record["scope"], client_id, record["tenant"], record["upn"])
        self.issue(client_id, record["tenant"], record["upn"], record["oid"], oidc, graph, record["claims"], None,
                   refresh="offline_access" in oidc, refresh_scope=record["scope"])

    def client_credentials(self, segment, resolved, client_id):
        """https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-client-creds-grant-flow
        (Get a token: tenant "in GUID or domain-name format"; scope RESOURCE/.default; no
        refresh token)."""
        state = self.state
        kind, key = resolved
        if kind != "tenant":
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS50059
            # MissingTenantRealmAndNoUserInformationProvided, what the live service answers a client credentials
            # request at common.
            self.sts_error("invalid_request", 50059, "No tenant-identifying information found in either the request "
                                                     "or implied by any provided credentials.")
        scope = self.form.get("scope", "")
        if not scope:
            self.sts_error("invalid_request", 900144, "The request body must contain the following parameter: 'scope'.")
        items = scope.split()
        if len(items) != 1 or not items[0].lower().endswith("/.default"):
            # The live service's AADSTS1002012 (not in
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes).
            self.sts_error("invalid_scope", 1002012, "The provided value for scope %s is not valid. Client credential "
                                                     "flows must have a scope value with /.default suffixed to the "
                                                     "resource identifier (application ID URI)." % scope)
        resource = items[0][:-len("/.default")]
        if resource.lower() not in GRAPH_RESOURCES + [GRAPH_APP_ID]:
            self.sts_error("invalid_resource", 500011, "The resource principal named %s was not found in the tenant "
                                                       "named %s. This can happen if the application has not been "
                                                       "installed by the administrator of the tenant or consented to by "
                                                       "any user in the tenant. You might have sent your authentication "
                                                       "request to the wrong tenant."
                           % (resource, TENANTS[key]["name"]))
        tid = TENANTS[key]["id"]
        # The app's service principal in that tenant: an object of its own.
        sp_oid = str(uuid.uuid5(uuid.NAMESPACE_URL, "standin-sp:%s:%s" % (client_id, key)))
        now = time.time()
        with state.lock:
            life = int(state.settings["access_token_lifetime"])
            roles = list(state.app_roles.get(key, []))
        claims = {"aud": GRAPH_APP_ID, "iss": "https://%s/%s/" % (state.host, tid), "iat": int(now),
                  "nbf": int(now), "exp": int(now + life), "appid": client_id, "appidacr": "1", "idp":
                  "https://%s/%s/" % (state.host, tid), "idtyp": "app", "oid": sp_oid, "sub": sp_oid, "tid": tid,
                  "uti": b64url(secrets.token_bytes(16)), "ver": "1.0"}
        if roles:
            claims["roles"] = roles
        token = state.signer.jwt(claims)
        with state.lock:
            state.access[token] = {"tid": tid, "tenant": key, "oid": sp_oid, "upn": None, "client": client_id,
                                   "scp": set(), "roles": set(roles), "exp": now + life, "issued": now, "cp1": False,
                                   "oidc": set(), "app": True}
        self.notes.update({"tid": tid})
        # "A successful response": token_type, expires_in, access_token (and ext_expires_in,
        # as for every token the platform issues).
        raise Reply(200, {"token_type": "Bearer", "expires_in": life, "ext_expires_in": life, "access_token": token},
                    [("Pragma", "no-cache")])

    def issue(self, client_id, key, upn, oid, oidc, graph, claims_request, nonce, refresh, refresh_scope):
        """A token response (https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow,
        Successful response): token_type,
        scope, expires_in, ext_expires_in, access_token, refresh_token with offline_access,
        id_token with openid."""
        state = self.state
        account = ACCOUNTS[upn]
        tenant = TENANTS[key]
        tid = tenant["id"]
        now = time.time()
        with state.lock:
            life = int(state.settings["access_token_lifetime"])
        cp1 = wants_cp1(claims_request)
        # Pairwise subject (https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference,
        # "sub": per application; "based on a combination of the token recipient, tenant, and user").
        sub = b64url(hashlib.sha256(("%s|%s|%s" % (client_id, tid, oid)).encode()).digest())[:43]
        scp = [p for p in sorted(graph)] + [s for s in ("profile", "openid", "email") if s in oidc]
        scope_text = " ".join(scp)
        home_issuer = self.issuer(TENANTS[account["home"]]["id"])
        at_claims = {
            # https://learn.microsoft.com/en-us/entra/identity-platform/access-token-claims-reference: aud, iss, iat,
            # nbf, exp, appid, oid, tid, scp, name, idtyp, xms_cc, ver. Graph's tokens are v1.0 tokens.
            "aud": GRAPH_APP_ID, "iss": "https://%s/%s/" % (state.host, tid), "iat": int(now), "nbf": int(now),
            "exp": int(now + life), "appid": client_id, "appidacr": "0", "idtyp": "user", "name": account["name"],
            "given_name": account["given"], "family_name": account["surname"], "oid": oid, "scp": scope_text,
            "sub": sub, "tid": tid, "unique_name": username(upn),
            "upn": username(upn) if key == account["home"] else None,
            "uti": b64url(secrets.token_bytes(16)), "ver": "1.0",
        }
        if at_claims["upn"] is None:
            del at_claims["upn"]
            at_claims["idp"] = "https://%s/%s/" % (state.host, TENANTS[account["home"]]["id"])
        if cp1:
            at_claims["xms_cc"] = ["cp1"]
        access = state.signer.jwt(at_claims)
        body = {"token_type": "Bearer", "scope": scope_text, "expires_in": life, "ext_expires_in": life,
                "access_token": access}
        with state.lock:
            state.access[access] = {"tid": tid, "tenant": key, "oid": oid, "upn": upn, "client": client_id,
                                    "scp": set(graph) | (oidc & {"openid", "profile", "email"}), "roles": set(),
                                    "exp": now + life, "issued": now, "cp1": cp1, "oidc": set(oidc), "app": False,
                                    "sub": sub}
            if refresh:
                token = "0.AS" + secrets.token_urlsafe(96)
                state.refresh[token] = {"upn": upn, "client": client_id, "scope": refresh_scope, "issued": now,
                                        "revoked": False, "expired": False}
                body["refresh_token"] = token
        if "openid" in oidc:
            id_claims = {"aud": client_id, "iss": self.issuer(tid), "iat": int(now), "nbf": int(now),
                         "exp": int(now + 3600), "sub": sub, "tid": tid, "ver": "2.0",
                         "uti": b64url(secrets.token_bytes(16)), "rh": "0.AS" + b64url(secrets.token_bytes(12))}
            if "profile" in oidc:
                # https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference: name,
                # preferred_username and oid need profile.
                id_claims.update({"name": account["name"], "preferred_username": username(upn), "oid": oid})
            if "email" in oidc or key != account["home"]:
                # https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference ("email":
                # present by default for guests; with the email scope otherwise).
                id_claims["email"] = account["mail"]
            if key != account["home"]:
                # https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference ("idp": differs
                # from iss for guests).
                id_claims["idp"] = home_issuer
            if nonce:
                id_claims["nonce"] = nonce
            body["id_token"] = state.signer.jwt(id_claims)
        self.notes.update({"user": upn, "tid": tid})
        if claims_request is not None:
            self.notes["cp1"] = cp1
        raise Reply(200, body, [("Pragma", "no-cache")])

    # Device authorization.

    def devicecode(self, segment):
        """https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-device-code
        (Device authorization request and response; no verification_uri_complete)."""
        state = self.state
        form = self.form
        self.tenant_or_error(segment)
        client_id = form.get("client_id", "")
        if not client_id:
            self.sts_error("invalid_request", 900144, "The request body must contain the following parameter: "
                                                      "'client_id'.")
        self.token_client(client_id, segment)
        if not form.get("scope"):
            self.sts_error("invalid_request", 900144, "The request body must contain the following parameter: 'scope'.")
        try:
            parse_scopes(form["scope"])
        except ScopeError as error:
            self.sts_error(error.error, error.code, error.message)
        claims = self.parse_claims(form.get("claims"))
        device_code = "DAQABIQEAAAD" + secrets.token_urlsafe(96)
        user_code = "".join(secrets.choice("BCDFGHJKLMNPQRSTVWXZ23456789") for _ in range(9))
        with state.lock:
            expires_in = int(state.settings["device_expires_in"])
            interval = int(state.settings["device_interval"])
            state.devices[device_code] = {
                "client": client_id, "segment": segment.lower(), "scope": form["scope"], "claims": claims,
                "user_code": user_code, "expires": time.time() + expires_in, "interval": interval,
                "status": "pending", "last_poll": None,
            }
        verification = "https://%s/devicelogin" % state.host
        raise Reply(200, {
            "user_code": user_code, "device_code": device_code, "verification_uri": verification,
            "expires_in": expires_in, "interval": interval,
            # The sentence the live service sends (with its own https://microsoft.com/devicelogin).
            "message": "To sign in, use a web browser to open the page %s and enter the code %s to authenticate."
                       % (verification, user_code),
        })

    def devicelogin(self):
        """The stand-in's verification page: the scripted user enters the code (and, with
        the query, says who signs in and whether they allow it)."""
        state = self.state
        q = dict(self.query)
        q.update(self.form)
        code = re.sub(r"[\s-]", "", q.get("user_code", "")).upper()
        if not code:
            body = ("<!DOCTYPE html>\n<html><head><title>Enter code</title></head><body><h1>Enter code</h1>"
                    "<p>Enter the code displayed on your app or device.</p><form method=\"GET\" action=\"/devicelogin\">"
                    "<input name=\"user_code\"/><input name=\"login_hint\"/><button name=\"decision\" value=\"allow\">"
                    "Continue</button><button name=\"decision\" value=\"deny\">Cancel</button></form></body></html>\n")
            raise Reply(200, body.encode(), content_type="text/html; charset=utf-8")
        now = time.time()
        with state.lock:
            found = next(((dc, r) for dc, r in state.devices.items() if r["user_code"] == code), (None, None))
            device_code, record = found
            status = record["status"] if record else None
        if record is None:
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS70018
            # BadVerificationCode (the user typed a wrong code).
            self.page(400, "Enter code", "We don't recognize this code. Invalid verification code due to User "
                                         "typing in wrong user code for device code flow.", 70018)
        if now > record["expires"]:
            self.page(400, "Enter code", "Verification code expired. Have the user retry the sign-in.", 70019)
        if status != "pending":
            # https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes: AADSTS90120
            # InvalidDeviceFlowRequest.
            self.page(400, "Enter code", "The request was already authorized or declined.", 90120)
        cookie_user, consent = self.browser_session()
        with state.lock:
            upn = (cookie_user or q.get("login_hint") or state.settings["default_user"]).lower()
        decision = (q.get("decision") or ("deny" if consent == "deny" else "allow")).lower()
        try:
            key, oid, _ = place(upn, record["segment"])
        except SignInError as error:
            self.page(400, "Sign in", error.message, error.code)
        self.notes.update({"user": upn, "tid": TENANTS[key]["id"], "decision": decision})
        oidc, graph, default = parse_scopes(record["scope"])
        with state.lock:
            tenant_consent = set(state.consented[key])
            granted = state.effective_consent(record["client"], key, upn)
            if decision == "allow" and not (graph - granted) & ADMIN_ONLY - tenant_consent:
                needed = graph - granted
                if needed:
                    state.grants.setdefault((record["client"], key, upn), set()).update(needed)
                record.update({"status": "approved", "upn": upn, "tenant": key, "oid": oid})
                outcome = "approved"
            elif decision == "allow":
                outcome = "admin consent required"
            else:
                record["status"] = "declined"
                outcome = "declined"
        if outcome == "admin consent required":
            self.page(400, "Need admin approval", "The grant requires admin permission.", 90094)
        title = "You have signed in" if outcome == "approved" else "Sign-in canceled"
        body = ("<!DOCTYPE html>\n<html><head><title>%s</title><meta name=\"standin-outcome\" content=\"%s\"/></head>"
                "<body><h1>%s</h1><p id=\"outcome\">%s</p></body></html>\n"
                % (title, outcome, title, "Device Authorized" if outcome == "approved" else "Device Denied"))
        raise Reply(200, body.encode(), content_type="text/html; charset=utf-8")

    def error_page(self):
        code = self.query.get("code", "")
        self.page(200, "AADSTS%s" % code if code.isdigit() else "Error lookup",
                  "See https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes for "
                  "AADSTS%s." % code if code.isdigit() else "No error code given.")

    # Graph.

    def graph_error(self, status, code, message, headers=()):
        """https://learn.microsoft.com/en-us/graph/errors: {"error": {"code", "message",
        "innerError": {"date", "request-id", "client-request-id"}}}."""
        self.notes.update({"error": code})
        raise Reply(status, {"error": {"code": code, "message": message, "innerError": {
            "date": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()), "request-id": self.request_id,
            "client-request-id": self.client_request_id}}},
            list(headers) + [("request-id", self.request_id), ("client-request-id", self.client_request_id)])

    def unauthorized(self, message, extra=""):
        # The live Graph's challenge for a missing or bad token;
        # https://learn.microsoft.com/en-us/entra/identity-platform/claims-challenge: realm "" and authorization_uri
        # against common.
        header = ('Bearer realm="", authorization_uri="https://%s/common/oauth2/authorize", client_id="%s"%s'
                  % (self.state.host, GRAPH_APP_ID, extra))
        self.graph_error(401, "InvalidAuthenticationToken", message, [("WWW-Authenticate", header)])

    def claims_challenge(self, since, reason):
        """https://learn.microsoft.com/en-us/entra/identity-platform/app-resilience-continuous-access-evaluation
        (401 with error="insufficient_claims" and claims = base64 of
        {"access_token":{"nbf":{"essential":true,"value":"<time>"}}})."""
        claims = json.dumps({"access_token": {"nbf": {"essential": True, "value": str(int(since))}}},
                            separators=(",", ":"))
        encoded = base64.b64encode(claims.encode()).decode()
        self.notes["claims_challenge"] = reason
        self.unauthorized("Continuous access evaluation resulted in challenge with result: InteractionRequired and "
                          "code: %s" % reason, ', error="insufficient_claims", claims="%s"' % encoded)

    def graph(self):
        state = self.state
        self.request_id = str(uuid.uuid4())
        given = self.headers.get("client-request-id", "")
        self.client_request_id = given if re.fullmatch(r"[0-9A-Za-z-]{1,64}", given) else self.request_id
        authorization = self.headers.get("Authorization", "")
        token = authorization[7:].strip() if authorization[:7].lower() == "bearer " else ""
        if not token:
            self.unauthorized("Access token is empty.")
        now = time.time()
        with state.lock:
            record = state.access.get(token)
            record = dict(record) if record else None
        if record is None:
            self.unauthorized("Access token validation failure. Invalid audience.")
        self.notes.update({"user": record["upn"], "tid": record["tid"]})
        if now >= record["exp"]:
            self.unauthorized("Lifetime validation failed, the token is expired.")
        with state.lock:
            fault = state.pop_fault(state.graph_faults)
        if fault:
            self.notes["scripted"] = fault.get("kind")
            self.graph_fault(fault, record)
        if not record["app"]:
            with state.lock:
                revoked_at = state.valid_from.get(record["upn"], 0)
                challenge = state.challenges.get((record["tid"], record["oid"]))
            # https://learn.microsoft.com/en-us/entra/identity-platform/app-resilience-continuous-access-evaluation:
            # CAE-capable tokens (cp1) are rejected after a critical event such as an admin revoking the user's
            # tokens.
            if record["cp1"] and record["issued"] < revoked_at:
                self.claims_challenge(revoked_at, "TokenIssuedBeforeRevocationTimestamp")
            if challenge and record["issued"] < challenge[0] and (record["cp1"] or challenge[1]):
                self.claims_challenge(challenge[0], "TokenCreatedWithOutdatedPolicies")
        if self.route == "/oidc/userinfo":
            self.require("GET", "POST")
            self.userinfo(record)
        route = self.route[len("/v1.0"):]
        if route == "/me":
            self.require("GET")
            if record["app"]:
                self.graph_error(400, "BadRequest", "/me request is only valid with delegated authentication flow.")
            self.need(record, READ_ME)
            self.answer_user(self.find_user(record["tenant"], record["oid"]), "users/$entity")
        if route == "/me/revokeSignInSessions":
            self.require("POST")
            if record["app"]:
                self.graph_error(400, "BadRequest", "/me request is only valid with delegated authentication flow.")
            self.revoke_sessions(record, self.find_user(record["tenant"], record["oid"]))
        match = re.fullmatch(r"/users/([^/]+)(/revokeSignInSessions)?", route)
        if match:
            wanted = urllib.parse.unquote(match.group(1))
            user = self.find_user(record["tenant"], wanted)
            if user is None:
                self.graph_error(404, "Request_ResourceNotFound", "Resource '%s' does not exist or one of its queried "
                                                                  "reference-property objects are not present." % wanted)
            if match.group(2):
                self.require("POST")
                self.revoke_sessions(record, user)
            self.require("GET")
            if not (not record["app"] and user[0]["id"] == record["oid"]):
                self.need(record, LIST_USERS_APP if record["app"] else LIST_USERS)
            else:
                self.need(record, READ_ME)
            self.answer_user(user, "users/$entity")
        if route == "/users":
            self.require("GET")
            self.need(record, LIST_USERS_APP if record["app"] else LIST_USERS)
            self.list_users(record)
        # The live Graph's answer for an unknown segment.
        self.graph_error(400, "BadRequest", "Resource not found for the segment '%s'."
                         % (route.strip("/").split("/")[0] or "v1.0"))

    def graph_fault(self, fault, record):
        kind = fault.get("kind")
        if kind == "throttled":
            # https://learn.microsoft.com/en-us/graph/throttling: 429 with Retry-After.
            retry = fault.get("retry_after", 2)
            self.graph_error(429, "TooManyRequests", "Too many requests. Please try again later.",
                             [("Retry-After", str(retry))] if retry is not None else [])
        if kind == "unavailable":
            # https://learn.microsoft.com/en-us/graph/errors: 503, "may be specified in a
            # Retry-After header"; code serviceNotAvailable.
            retry = fault.get("retry_after", 2)
            self.graph_error(503, "serviceNotAvailable", "The service is not available. Try the request again after a "
                                                         "delay.", [("Retry-After", str(retry))] if retry is not None
                             else [])
        if kind == "invalid_token":
            self.unauthorized("Access token validation failure.")
        if kind == "claims_challenge":
            # https://learn.microsoft.com/en-us/entra/identity-platform/claims-challenge ("Your application receives
            # claims challenges from popular services like Microsoft Graph only if it declares its client
            # capabilities").
            if record["app"] or not (record["cp1"] or fault.get("any_client")):
                self.notes["scripted"] = "claims_challenge skipped: the client did not declare cp1"
                return
            since = time.time()
            with self.state.lock:
                self.state.challenges[(record["tid"], record["oid"])] = (since, bool(fault.get("any_client")))
            self.claims_challenge(since, "TokenCreatedWithOutdatedPolicies")
        self.graph_error(500, "generalException", "An unspecified error has occurred.")

    def need(self, record, permissions):
        held = record["roles"] if record["app"] else record["scp"]
        if not held & permissions:
            # The live Graph's 403 for a token without the permission.
            self.graph_error(403, "Authorization_RequestDenied", "Insufficient privileges to complete the operation.")

    def find_user(self, tenant, id_or_upn):
        wanted = id_or_upn.lower()
        for user, account in self.state.directory[tenant]:
            if user["id"].lower() == wanted or user["userPrincipalName"].lower() == wanted:
                return user, account
        return None

    def selected(self, user):
        select = self.query.get("$select")
        names = DEFAULT_PROPERTIES if not select else [s.strip() for s in select.split(",") if s.strip()]
        for name in names:
            if name not in ALL_PROPERTIES:
                self.graph_error(400, "Request_BadRequest", "Could not find a property named '%s' on type "
                                                            "'microsoft.graph.user'." % name)
        result = {}
        for name in names:
            if name == "signInSessionsValidFromDateTime":
                with self.state.lock:
                    since = self.state.valid_from.get((self.find_account(user) or ""), None)
                result[name] = iso(since) if since else None
            else:
                result[name] = user.get(name)
        return result

    def find_account(self, user):
        for tenant_users in self.state.directory.values():
            for candidate, account in tenant_users:
                if candidate is user:
                    return account
        return None

    def answer_user(self, found, context):
        user, _ = found
        body = {"@odata.context": "https://%s/v1.0/$metadata#%s" % (self.state.host, context)}
        body.update(self.selected(user))
        raise Reply(200, body, [("request-id", self.request_id), ("client-request-id", self.client_request_id)])

    def list_users(self, record):
        """https://learn.microsoft.com/en-us/graph/api/user-list and
        https://learn.microsoft.com/en-us/graph/paging (@odata.nextLink with $skiptoken)."""
        q = self.query
        users = [u for u, _ in self.state.directory[record["tenant"]]]
        if "$filter" in q:
            match = FILTER.match(q["$filter"].strip())
            if not match or match.group(1) not in FILTER_FIELDS:
                self.graph_error(400, "Request_UnsupportedQuery", "Unsupported Query.")
            field, prefix = match.group(1), match.group(2).replace("''", "'").lower()
            users = [u for u in users if (u.get(field) or "").lower().startswith(prefix)]
        try:
            top = int(q.get("$top", "100"))
        except ValueError:
            top = -1
        if not 1 <= top <= 999:
            self.graph_error(400, "Request_BadRequest", "Invalid page size specified: '%s'. Must be between 1 and 999 "
                                                        "inclusive." % q.get("$top"))
        with self.state.lock:
            size = min(top, int(self.state.settings["graph_page_size"]))
        skip = 0
        if "$skiptoken" in q:
            try:
                skip = int(json.loads(base64.urlsafe_b64decode(q["$skiptoken"] + "==").decode())["o"])
            except (ValueError, KeyError, TypeError):
                self.graph_error(400, "Request_BadRequest", "Invalid skip token.")
        page = users[skip:skip + size]
        body = {"@odata.context": "https://%s/v1.0/$metadata#users" % self.state.host,
                "value": [self.selected(u) for u in page]}
        if skip + size < len(users):
            rest = {k: v for k, v in q.items() if k != "$skiptoken"}
            rest["$skiptoken"] = b64url(json.dumps({"o": skip + size}).encode())
            body["@odata.nextLink"] = "https://%s/v1.0/users?%s" % (
                self.state.host, urllib.parse.urlencode(rest, quote_via=urllib.parse.quote, safe="$"))
        raise Reply(200, body, [("request-id", self.request_id), ("client-request-id", self.client_request_id)])

    def revoke_sessions(self, record, found):
        """https://learn.microsoft.com/en-us/graph/api/user-revokesigninsessions: invalidates
        the user's refresh tokens; "doesn't revoke sign-in sessions for external users,
        because external users sign in through their home tenant" (also
        https://learn.microsoft.com/en-us/entra/identity-platform/refresh-tokens:
        "Refresh tokens are not revoked for B2B users in their resource tenant")."""
        self.need(record, REVOKE_SESSIONS)
        if found is None:
            self.graph_error(404, "Request_ResourceNotFound", "Resource does not exist.")
        user, upn = found
        if upn and user["userType"] != "Guest":
            with self.state.lock:
                self.state.valid_from[upn] = time.time()
            self.notes["revoked"] = upn
        elif upn:
            self.notes["revoked"] = "nothing (guest object)"
        raise Reply(200, {"@odata.context": "https://%s/v1.0/$metadata#Edm.Boolean" % self.state.host, "value": True},
                    [("request-id", self.request_id), ("client-request-id", self.client_request_id)])

    def userinfo(self, record):
        """https://learn.microsoft.com/en-us/entra/identity-platform/userinfo: needs openid;
        names with profile, email with email; sub as in the ID token."""
        if record["app"] or "openid" not in record["oidc"]:
            self.graph_error(403, "Authorization_RequestDenied", "Insufficient privileges to complete the operation.")
        account = ACCOUNTS[record["upn"]]
        body = {"sub": record["sub"]}
        if "profile" in record["oidc"]:
            body.update({"name": account["name"], "family_name": account["surname"], "given_name": account["given"],
                         "picture": "https://%s/v1.0/me/photo/$value" % self.state.host})
        if "email" in record["oidc"]:
            body["email"] = account["mail"]
        raise Reply(200, body)

    # Control.

    def control(self):
        if self.client_address[0] != "127.0.0.1":
            raise Reply(403, {"error": "loopback only"})
        if self.command == "GET":
            raise Reply(200, self.locked_snapshot())
        self.require("POST")
        try:
            request = json.loads(self.body or b"{}")
            if not isinstance(request, dict):
                raise ValueError
        except ValueError:
            raise Reply(400, {"error": "the control body must be a JSON object"}) from None
        state = self.state
        try:
            with state.lock:
                self.apply_control(state, request)
        except (KeyError, ValueError, TypeError) as error:
            raise Reply(400, {"error": "bad control request: %s" % error}) from None
        self.notes["control"] = sorted(request)
        raise Reply(200, {"ok": True, "state": self.locked_snapshot()})

    @staticmethod
    def tenant_key(name):
        if name in TENANTS:
            return name
        resolved = resolve_tenant(name)
        if resolved is None or resolved[1] is None:
            raise ValueError("unknown tenant %r" % name)
        return resolved[1]

    def apply_control(self, state, request):
        known = {"reset", "set", "revoke_sessions", "expire_access_tokens", "next_token_errors",
                 "next_authorize_errors", "next_graph_errors"}
        unknown = set(request) - known
        if unknown:
            raise ValueError("unknown keys %s" % sorted(unknown))
        if request.get("reset"):
            state.token_faults, state.authorize_faults, state.graph_faults = {}, [], []
            state.challenges = {}
        settings = request.get("set") or {}
        for name, value in settings.items():
            if name == "default_user":
                if value.lower() not in ACCOUNTS:
                    raise ValueError("unknown user %r" % value)
                state.settings[name] = value.lower()
            elif name in ("access_token_lifetime", "device_interval", "device_expires_in", "graph_page_size"):
                if int(value) < (0 if name == "device_interval" else 1):
                    raise ValueError("%s must be positive" % name)
                state.settings[name] = int(value)
            elif name == "device_slow_down":
                state.settings[name] = bool(value)
            elif name == "consented":
                for tenant, scopes in value.items():
                    names = []
                    for scope in scopes:
                        low = scope.lower()
                        if low in OIDC_SCOPES:
                            continue
                        if low not in CANONICAL:
                            raise ValueError("unknown permission %r" % scope)
                        names.append(CANONICAL[low])
                    state.consented[self.tenant_key(tenant)] = names
            elif name == "app_roles":
                for tenant, roles in value.items():
                    state.app_roles[self.tenant_key(tenant)] = [CANONICAL.get(r.lower(), r) for r in roles]
            elif name == "redirect_uris":
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise ValueError("redirect_uris must be a list of strings")
                state.redirect_uris[:] = value
            else:
                raise ValueError("unknown setting %r" % name)
        revoke = request.get("revoke_sessions")
        if revoke:
            for upn in [revoke] if isinstance(revoke, str) else revoke:
                if upn.lower() not in ACCOUNTS:
                    raise ValueError("unknown user %r" % upn)
                state.valid_from[upn.lower()] = time.time()
        if request.get("expire_access_tokens"):
            now = time.time()
            for record in state.access.values():
                record["exp"] = min(record["exp"], now)
        token_errors = request.get("next_token_errors")
        if token_errors:
            if isinstance(token_errors, list):
                token_errors = {"any": token_errors}
            for grant, faults in token_errors.items():
                grant = "device_code" if grant == DEVICE_GRANT else grant
                if grant not in ("authorization_code", "refresh_token", "device_code", "client_credentials", "any"):
                    raise ValueError("unknown grant %r" % grant)
                state.token_faults.setdefault(grant, []).extend(self.faults(faults, (
                    "interaction_required", "consent_required", "login_required", "expired", "revoked",
                    "temporarily_unavailable", "throttled", "server_error")))
        if request.get("next_authorize_errors"):
            state.authorize_faults.extend(self.faults(request["next_authorize_errors"], (
                "interaction_required", "login_required", "consent_required", "access_denied")))
        if request.get("next_graph_errors"):
            state.graph_faults.extend(self.faults(request["next_graph_errors"], (
                "throttled", "unavailable", "invalid_token", "claims_challenge")))

    @staticmethod
    def faults(items, kinds):
        result = []
        for item in items:
            if isinstance(item, str):
                item = {"kind": item}
            if not isinstance(item, dict) or item.get("kind") not in kinds:
                raise ValueError("fault kind must be one of %s" % ", ".join(kinds))
            result.append({k: v for k, v in item.items() if not k.startswith("_")})
        return result


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, context):
        super().__init__(("127.0.0.1", 0), Handler)
        self.context = context

    def finish_request(self, request, client_address):
        # The TLS handshake on the connection's own thread, with a timeout, so that a client
        # that connects and says nothing holds up nobody else.
        request.settimeout(10)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            request.close()
            return
        try:
            super().finish_request(tls, client_address)
        finally:
            try:
                tls.close()
            except OSError:
                pass

    def handle_error(self, request, client_address):
        pass


def main():
    parser = argparse.ArgumentParser(description="Microsoft identity platform and Graph stand-in (see the docstring).")
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--watch-pid", type=int, default=os.getppid())
    parser.add_argument("--lifetime", type=float, default=600)
    parser.add_argument("--access-token-lifetime", type=int, default=3600)
    parser.add_argument("--default-user", default="ada@contoso.test")
    parser.add_argument("--device-interval", type=int, default=5)
    parser.add_argument("--graph-page-size", type=int, default=100)
    args = parser.parse_args()
    if args.default_user.lower() not in ACCOUNTS:
        parser.error("--default-user must be one of %s" % ", ".join(ACCOUNTS))
    args.default_user = args.default_user.lower()
    args.state_dir = os.path.abspath(args.state_dir)
    # Keys, logs and the info file (it holds the confidential client's secret) for this
    # user only.
    os.umask(0o077)
    os.makedirs(args.state_dir, exist_ok=True)
    signer = make_pki(args.state_dir)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(os.path.join(args.state_dir, "server.pem"), os.path.join(args.state_dir, "server.key"))
    server = Server(context)
    port = server.server_address[1]
    base_url = "https://127.0.0.1:%d" % port
    server.state = State(args, signer, base_url)
    state = server.state
    host = "127.0.0.1:%d" % port
    extra = {
        "host": host,
        "ca_file": os.path.join(args.state_dir, "ca.pem"),
        "tenants": {key: {"id": t["id"], "name": t["name"], "domain": (t["domains"] or [None])[0],
                          "domains": t["domains"]} for key, t in TENANTS.items()},
        "client_id": PUBLIC_CLIENT,
        "clients": {
            "public": {"client_id": PUBLIC_CLIENT, "redirect_uris": ["http://localhost"], "allow_public_client": True},
            "public_no_device": {"client_id": NO_DEVICE_CLIENT, "redirect_uris": ["http://localhost"],
                                 "allow_public_client": False},
            "confidential": {"client_id": CONFIDENTIAL_CLIENT, "client_secret": state.client_secret,
                             "app_roles": state.app_roles["contoso"]},
            "spa": {"client_id": SPA_CLIENT, "redirect_uris": ["http://localhost"], "platform": "spa"},
            "disabled": {"client_id": DISABLED_CLIENT, "redirect_uris": ["http://localhost"], "disabled": True},
        },
        "users": {upn: {"kind": a["kind"], "home": a["home"], "name": a["name"], "oids": a["oids"],
                        "guest_in": [t for t in a["oids"] if t != a["home"]]} for upn, a in ACCOUNTS.items()},
        "default_user": args.default_user,
        "graph_resource": GRAPH_RESOURCE,
        "graph_app_id": GRAPH_APP_ID,
        "authority_template": "https://%s/{tenant}/oauth2/v2.0" % host,
        "control_url": base_url + "/_test/control",
        "requests_log": os.path.join(args.state_dir, "requests.log"),
        "authorize_log": os.path.join(args.state_dir, "authorize.log"),
    }
    loopback_service.serve(server, os.path.join(args.state_dir, INFO_NAME), args.watch_pid, args.lifetime,
                           scheme="https", extra=extra)


if __name__ == "__main__":
    sys.exit(main())
