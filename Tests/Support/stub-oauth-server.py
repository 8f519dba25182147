#!/usr/bin/env python3
"""Stub OAuth 2.0 / OpenID Connect server for tokenctl's integration tests.

The real authorization server covers ordinary behaviour; this stub exists for what a
real server will not do on demand: races on one refresh token, scripted device-flow
polls, and faults (hangs, resets, 5xx, HTML, truncated or oversized bodies). Python 3.11
standard library only.

Usage
    stub-oauth-server.py --state-dir DIR [--lifetime SECONDS] [--access-token-seconds N]
                      [--answer-delay SECONDS] [--clock-offset SECONDS] [--watch-pid PID]
                      [--revoke-on-rotation] [--refresh-scope echo|silent|jwt]

--answer-delay holds every token endpoint answer for that long after the grant has been
decided (a refresh token rotated, say) and before it is sent: the window in which a
client that dies has lost the answer the server already acted on.

--revoke-on-rotation revokes a family's earlier access tokens when a refresh rotates its
refresh token, as django-oauth-toolkit does (it deletes the access token issued beside
the rotated one): a client handed the old token a moment before the refresh finds it
dead. Without it, earlier access tokens live until they expire.

--refresh-scope silent answers a refresh with no scope, whatever it asked for, as
LemonLDAP::NG does (it issues the grant's scope and says nothing); jwt does the same, and
every access token is then a JWT (signed with nothing a client could check) whose scope
claim is the grant's, "openid profile email". Default echo: the asked scope is echoed.

--clock-offset shifts the Date header of every answer by that many seconds (negative:
into the past), as a server whose clock is off, or a client's, would look: for
`tokenctl doctor --online`'s clock check. Nothing else uses the shifted time.

It binds 127.0.0.1 on a free port, then writes DIR/stub.json atomically:
    {"base_url": "http://127.0.0.1:PORT", "port": PORT, "pid": PID}
and serves. It stops by itself (exit status 0, stub.json removed) when the watched
process (default: its parent; 0 = watch nothing) is gone, checked every 0.5 s, after
--lifetime seconds (default 600), or on SIGTERM/SIGINT/SIGHUP. Each request is one line
in DIR/stub.log: time, method, path, the query parameters that tune the stub (delay,
expires_in, interval, script, no_rotation, omit_expires, size, status) and the status
(or "hang" / "reset"). Nothing else from the query, no header and no body is logged,
so no token, code or secret ever reaches the log.

Tokens are random, single-server-run values. Refresh tokens belong to a family (one
grant): they rotate, and reuse of a spent one revokes the whole family, access tokens
included, as reuse detection does (RFC 9700 §4.14.2).

OAuth endpoints. ISSUER is BASE_URL, BASE_URL/tenants/NAME (any NAME), or
BASE_URL/mismatch; every endpoint below exists under each of those prefixes and shares
one state.
  POST ISSUER/token  form-encoded (RFC 6749). Client authentication is not checked,
      only counted: Authorization: Basic -> "basic", client_secret in the form -> "post",
      both -> "both", neither -> "none".
      grant_type=refresh_token       rotation: 200 with a new access_token and
          refresh_token; the presented one becomes "used". A used one -> 400
          invalid_grant, family revoked, and reuse_detected += 1 (each time a spent
          token is presented). An unknown or revoked one -> 400 invalid_grant.
      grant_type=client_credentials  200 with an access token, no refresh token.
      grant_type=urn:ietf:params:oauth:grant-type:device_code  device_code=... -> the
          next outcome of that code's script (see device_authorization); "ok" -> 200
          with access + refresh token (a new family); else 400 {"error": OUTCOME}.
          Unknown code -> 400 invalid_grant; past its expires_in -> 400 expired_token.
      Other grant types -> 400 unsupported_grant_type; missing fields -> 400
      invalid_request. Success: {"access_token", "token_type": "Bearer", "expires_in",
      ["refresh_token"], ["scope" echoed]}, with Cache-Control: no-store.
      Query parameters (RFC 6749 §3.2 allows a query on the token endpoint):
        delay=SECONDS   sleep before answering (after counting the request)
        expires_in=N    expires_in and server-side access-token lifetime
                        (default --access-token-seconds, 3600)
        no_rotation=1   refresh: no new refresh token; the presented one stays current
        omit_expires=1  leave expires_in out of the response
  POST ISSUER/revoke  (RFC 7009) token=... [token_type_hint=...] -> 200 empty body. A
      refresh token revokes its family; an access token only itself; unknown -> 200 too.
  POST ISSUER/device_authorization  (RFC 8628 §3.1) -> 200 {"device_code",
      "user_code", "verification_uri": ISSUER/device, "verification_uri_complete",
      "expires_in", "interval"}. Query: expires_in=N (default 600), interval=N
      (default 5), script=O1,O2,... the outcomes of successive polls of this code
      (ok, authorization_pending, slow_down, access_denied, expired_token,
      authorization_declined or any other [a-z_] error name; default "ok"). After the
      script's end the last outcome repeats.
  POST ISSUER/introspect  (RFC 7662) token=... [token_type_hint=...] -> 200 from the
      stub's own records: an access token -> {"active": true, "token_type": "Bearer",
      "exp": unix time} while it is unexpired and not revoked (nor its family); a
      refresh token -> {"active": true} while it is current (not used, family not
      revoked); anything else -> {"active": false}. Missing token -> 400
      invalid_request. The caller is not authenticated, only counted, as for /token.
  GET  ISSUER/device  a placeholder verification page (200 text).
  GET  ISSUER/userinfo (or POST)  Authorization: Bearer of a valid access token ->
      200 {"sub": "stub-user", "email": "stub@example.test"}; else 401 with
      WWW-Authenticate: Bearer error="invalid_token".
  GET  ISSUER/.well-known/openid-configuration
  GET  ISSUER/.well-known/oauth-authorization-server
  GET  BASE_URL/.well-known/oauth-authorization-server/tenants/NAME   (RFC 8414 §3.1)
  GET  BASE_URL/.well-known/oauth-authorization-server/mismatch
      Metadata: issuer = ISSUER, except under /mismatch, where it is
      "https://evil.example" (for the issuer check); token_endpoint,
      revocation_endpoint, introspection_endpoint, device_authorization_endpoint,
      userinfo_endpoint, authorization_endpoint, jwks_uri all point at ISSUER/....
  GET  ISSUER/jwks      {"keys": []}
  POST ISSUER/register  (RFC 7591), only under ISSUER = BASE_URL/tenants/register-KIND,
      whose metadata alone lists registration_endpoint. The JSON body is kept for
      /_admin/stats ("registrations"; client metadata holds no secret). KIND:
        ok                       201 {"client_id", "registration_access_token",
                                 "registration_client_uri": ISSUER/register/ID, the
                                 metadata echoed}; DELETE there -> 204, then 401.
        401 403                  that status, {"error": "invalid_token"}.
        invalid_client_metadata invalid_redirect_uri  400 {"error": KIND, ...}.
  ANY  ISSUER/authorize 501 (not implemented).
  Any other path -> 404; a method an endpoint does not take -> 405.

Admin endpoints (not counted in "requests")
  POST /_admin/issue   a fresh family: 200 {"access_token", "refresh_token",
      "expires_in", "token_type"}; query expires_in=N as for /token. Tests store it
      with an expiry in the past to force a refresh.
  GET  /_admin/stats   {"requests": {path without query: n} (all but /_admin/...),
      "token_requests": n (requests the token endpoint handled: ISSUER/token and
      /fault/slow/token, not the other faults),
      "grant_types": {grant_type: n}, "client_auth": {"basic", "post", "both", "none"}
      (over ISSUER/token, /revoke, /introspect and /device_authorization),
      "reuse_detected": n, "registrations": [client metadata of each registration request],
      "device_polls": {"1": [unix times of polls], "2": ...} (keyed by the order of
      device_authorization since the last reset), "current_refresh_tokens": n}.
  POST /_admin/reset   forget all tokens, device codes and counters.
  POST /_admin/outage?status=N  every ISSUER/token request answers N (a short text/plain
      body) from now on, as a server in an outage does, still counted in
      "token_requests"; status=0 ends the outage.
  GET  /_admin/check?refresh_token=X (or POST with that form field) ->
      {"status": "current" | "used" | "revoked" | "unknown", "used": bool};
      "revoked" (family revoked) wins over "used".

Fault endpoints: /fault/KIND/ENDPOINT, ENDPOINT one of token, revoke,
device_authorization, userinfo, .well-known/openid-configuration,
.well-known/oauth-authorization-server. Counted under their own path in "requests".
The request (with its body) is read first, whatever KIND.
  hang             never answer; the connection is held until the client closes it or
                   the stub stops, on its own thread, so other requests go on.
  slow             answer as ISSUER = BASE_URL/fault/slow would, after ?delay=
                   seconds (default 5).
  500 502 503      that status, short text/plain body.
  503-retry-after  503 with Retry-After: 2.
  html             200 text/html error page.   502-html  the same with status 502.
  empty            200, Content-Type: application/json, empty body.
  wrong-shape      200 {"accessToken": 5}.   wrong-shape-array  200 ["access_token"].
  invalid-json     200 {"access_token": "abc",    (truncated)
  oversized        200 JSON token response padded to ?size= bytes (default 2 MiB),
                   with Content-Length.
  oversized-chunked  the same, chunked transfer encoding, no Content-Length.
  invalid_grant invalid_request slow_down  400 {"error": KIND, "error_description"}
  invalid_client   401 with WWW-Authenticate: Basic realm="stub", same JSON.
  temporarily_unavailable  503 with that JSON. (?status=N overrides the status of these
                   five.)
  error-200        200 {"error": "bad_verification_code", "error_description": ...}.
  reset            close the connection without answering (TCP RST).
  any other KIND   404.
"""

import argparse
import base64
import json
import os
import re
import secrets
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, urlsplit

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
EVIL_ISSUER = "https://evil.example"
MAX_BODY = 1 << 20
# Query parameters that only tune the stub; the only ones whose values reach the log.
LOGGED_QUERY = ("delay", "expires_in", "interval", "script", "no_rotation", "omit_expires", "size", "status")
METADATA = r"\.well-known/openid-configuration|\.well-known/oauth-authorization-server"
ISSUER_PREFIX = r"/tenants/[^/]+|/mismatch"
ROUTE = re.compile(
    rf"(?P<prefix>{ISSUER_PREFIX})?/(?P<endpoint>token|revoke|introspect|device_authorization|userinfo|authorize|jwks|device|register(?:/[A-Za-z0-9_-]+)?|{METADATA})"
)
RFC8414 = re.compile(rf"/\.well-known/oauth-authorization-server(?P<prefix>{ISSUER_PREFIX})")
FAULT = re.compile(rf"/fault/(?P<kind>[^/]+)/(?P<endpoint>token|revoke|device_authorization|userinfo|{METADATA})")
OAUTH_ERRORS = {
    "invalid_grant": 400,
    "invalid_request": 400,
    "slow_down": 400,
    "invalid_client": 401,
    "temporarily_unavailable": 503,
}
TEXT_STATUSES = {"500": 500, "502": 502, "503": 503, "503-retry-after": 503}
HTML_STATUSES = {"html": 200, "502-html": 502}
# What a proxy, load balancer or captive portal puts where JSON was expected.
HTML_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>Error</title></head>"
    b"<body><h1>Something went wrong</h1><p>Please try again later.</p></body></html>\n"
)


class BadQuery(ValueError):
    pass


def query_number(query, name, default, kind=float):
    if name not in query:
        return default
    try:
        return kind(query[name])
    except ValueError:
        raise BadQuery(name) from None


def flag(query, name):
    return query.get(name, "") in ("1", "true", "yes")


def new_secret(kind):
    return f"stub-{kind}-{secrets.token_urlsafe(24)}"


def jwt_access_token():
    """An access token in JWT form (RFC 9068) carrying the grant's scope claim."""

    def part(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    header = json.dumps({"alg": "RS256", "typ": "at+jwt"}).encode()
    claims = json.dumps({"scope": "openid profile email", "jti": secrets.token_urlsafe(16)}).encode()
    return f"{part(header)}.{part(claims)}.{part(secrets.token_bytes(32))}"


class State:
    """Tokens, device codes and counters. Handlers run on many threads at once, so every
    read-modify-write happens under the one lock; the decisive check-and-rotate of a
    refresh token is a single critical section, which is what makes the race exact."""

    def __init__(self, access_seconds):
        self.lock = threading.Lock()
        self.access_seconds = access_seconds
        self.answer_delay = 0.0
        self.revoke_on_rotation = False
        self.refresh_scope = "echo"
        self.reset()

    def reset(self):
        self.requests = Counter()
        self.token_requests = 0
        self.grant_types = Counter()
        self.client_auth = Counter({"basic": 0, "post": 0, "both": 0, "none": 0})
        self.reuse_detected = 0
        self.families = {}  # family id -> revoked?
        self.refresh = {}  # refresh token -> {"family", "used"}
        self.access = {}  # access token -> {"family" (None: client credentials), "expires_at" (monotonic), "revoked"}
        self.devices = {}  # device code -> {"key", "script", "polls" ([unix times]), "expires_at"}
        self.registrations = []  # the client metadata of each registration request
        self.registered = {}  # client id -> registration access token
        self.outage = 0  # the status every token request gets, 0 for none

    # The underscored helpers expect the lock to be held.
    def _new_family(self):
        family = len(self.families) + 1
        self.families[family] = False
        return family

    def _token_set(self, family, seconds, refresh=True, omit_expires=False):
        access = jwt_access_token() if self.refresh_scope == "jwt" else new_secret("at")
        self.access[access] = {"family": family, "expires_at": time.monotonic() + seconds, "revoked": False}
        tokens = {"access_token": access, "token_type": "Bearer"}
        if not omit_expires:
            tokens["expires_in"] = seconds
        if refresh:
            token = new_secret("rt")
            self.refresh[token] = {"family": family, "used": False}
            tokens["refresh_token"] = token
        return tokens

    def _revoke_family(self, family):
        self.families[family] = True
        for record in self.access.values():
            if record["family"] == family:
                record["revoked"] = True

    def issue(self, seconds):
        with self.lock:
            return self._token_set(self._new_family(), seconds)

    def refresh_grant(self, token, seconds, rotate, omit_expires):
        with self.lock:
            record = self.refresh.get(token)
            if record is None:
                return 400, {"error": "invalid_grant", "error_description": "unknown refresh token"}
            # Every presentation of a spent token counts, even once its family is revoked:
            # the count is how many times a client sent a stale token.
            if record["used"]:
                self.reuse_detected += 1
                self._revoke_family(record["family"])
                return 400, {"error": "invalid_grant", "error_description": "refresh token reused; grant revoked"}
            if self.families[record["family"]]:
                return 400, {"error": "invalid_grant", "error_description": "revoked refresh token"}
            record["used"] = rotate
            if rotate and self.revoke_on_rotation:
                for access in self.access.values():
                    if access["family"] == record["family"]:
                        access["revoked"] = True
            return 200, self._token_set(record["family"], seconds, refresh=rotate, omit_expires=omit_expires)

    def client_credentials(self, seconds, omit_expires):
        with self.lock:
            return 200, self._token_set(None, seconds, refresh=False, omit_expires=omit_expires)

    def new_device(self, script, expires_in):
        with self.lock:
            code = new_secret("dc")
            key = str(len(self.devices) + 1)
            expires_at = time.monotonic() + expires_in
            self.devices[code] = {"key": key, "script": script, "polls": [], "expires_at": expires_at}
            return code

    def poll_device(self, code, seconds, omit_expires):
        with self.lock:
            device = self.devices.get(code)
            if device is None:
                return 400, {"error": "invalid_grant", "error_description": "unknown device code"}
            device["polls"].append(time.time())
            if time.monotonic() >= device["expires_at"]:
                return 400, {"error": "expired_token"}
            script = device["script"]
            outcome = script[min(len(device["polls"]), len(script)) - 1]
            if outcome == "ok":
                return 200, self._token_set(self._new_family(), seconds, omit_expires=omit_expires)
            return 400, {"error": outcome}

    def revoke(self, token):
        with self.lock:
            if token in self.refresh:
                self._revoke_family(self.refresh[token]["family"])
            elif token in self.access:
                self.access[token]["revoked"] = True

    def access_valid(self, token):
        with self.lock:
            record = self.access.get(token)
            return (
                record is not None
                and not record["revoked"]
                and time.monotonic() < record["expires_at"]
                and not (record["family"] is not None and self.families[record["family"]])
            )

    def introspect(self, token):
        """RFC 7662 §2.2, from the stub's records: access tokens by access_valid's rule,
        refresh tokens while current."""
        with self.lock:
            record = self.access.get(token)
            if record is not None:
                family_revoked = record["family"] is not None and self.families[record["family"]]
                remaining = record["expires_at"] - time.monotonic()
                if record["revoked"] or family_revoked or remaining <= 0:
                    return {"active": False}
                return {"active": True, "token_type": "Bearer", "exp": int(time.time() + remaining)}
            record = self.refresh.get(token)
            if record is not None and not record["used"] and not self.families[record["family"]]:
                return {"active": True}
            return {"active": False}

    def check(self, token):
        with self.lock:
            record = self.refresh.get(token)
            if record is None:
                return {"status": "unknown", "used": False}
            if self.families[record["family"]]:
                return {"status": "revoked", "used": record["used"]}
            return {"status": "used" if record["used"] else "current", "used": record["used"]}

    def stats(self):
        with self.lock:
            return {
                "requests": dict(self.requests),
                "token_requests": self.token_requests,
                "grant_types": dict(self.grant_types),
                "client_auth": dict(self.client_auth),
                "reuse_detected": self.reuse_detected,
                "registrations": list(self.registrations),
                "device_polls": {d["key"]: list(d["polls"]) for d in self.devices.values()},
                "current_refresh_tokens": sum(
                    1 for r in self.refresh.values() if not r["used"] and not self.families[r["family"]]
                ),
            }


class Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 for keep-alive and for the chunked fault; every answer has a length.
    protocol_version = "HTTP/1.1"
    server_version = "stub-oauth-server"
    # An idle keep-alive connection costs one thread; drop it after a while. (The hang
    # fault waits with select() and is not bound by this.)
    timeout = 60

    def log_message(self, format, *args):
        # The default logs the request line, query (and so secrets) included, to stderr.
        pass

    def date_time_string(self, timestamp=None):
        # The Date header (send_response): the only place --clock-offset shows.
        now = time.time() if timestamp is None else timestamp
        return super().date_time_string(now + self.server.clock_offset)

    def do_GET(self):
        self.handle_request()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_GET

    # Plumbing.

    def handle_request(self):
        self.status = None
        self.logged = False
        url = urlsplit(self.path)
        self.route_path = url.path
        self.query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        self.logged_query = dict(self.query)  # the slow fault edits self.query
        state = self.server.state
        if not url.path.startswith("/_admin/"):
            with state.lock:
                state.requests[url.path] += 1
        try:
            body = self.read_body()
            if body is None:
                return
            self.body = body
            self.form = {k: v[-1] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
            self.route()
        except BadQuery as error:
            self.reply_json(400, {"error": "invalid_request", "error_description": f"bad query parameter {error}"})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            self.status = self.status or "client-gone"
        finally:
            self.log()

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            self.reply_text(411, "stub: send a Content-Length\n")
            return None
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self.close_connection = True
            self.reply_text(413, "stub: bad or too large Content-Length\n")
            return None
        return self.rfile.read(length) if length else b""

    def log(self, status=None):
        if self.logged:
            return
        self.logged = True
        path = re.sub(r"[^\x21-\x7e]", "?", self.route_path)[:200]
        query = self.logged_query
        tuning = "&".join(f"{k}={quote(query[k][:80], safe=',.')}" for k in LOGGED_QUERY if k in query)
        self.server.log(f"{self.command} {path}{'?' + tuning if tuning else ''} {status or self.status or '-'}")

    def reply(self, status, body, content_type, headers=()):
        self.status = status
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def reply_json(self, status, value, headers=()):
        # RFC 6749 §5.1: token responses must not be cached; harmless on the rest.
        headers = (("Cache-Control", "no-store"), ("Pragma", "no-cache"), *headers)
        self.reply(status, json.dumps(value).encode(), "application/json", headers)

    def reply_text(self, status, text, headers=()):
        self.reply(status, text.encode(), "text/plain; charset=utf-8", headers)

    def require(self, *methods):
        if self.command in methods:
            return True
        self.reply_text(405, "stub: method not allowed\n", (("Allow", ", ".join(methods)),))
        return False

    def client_auth(self):
        basic = self.headers.get("Authorization", "").lower().startswith("basic ")
        post = "client_secret" in self.form
        kind = "both" if basic and post else "basic" if basic else "post" if post else "none"
        with self.server.state.lock:
            self.server.state.client_auth[kind] += 1

    # Routing.

    def route(self):
        path = self.route_path
        if path.startswith("/_admin/"):
            return self.admin(path[len("/_admin/"):])
        if match := FAULT.fullmatch(path):
            return self.fault(match["kind"], match["endpoint"])
        if match := RFC8414.fullmatch(path):
            return self.endpoint(match["prefix"], ".well-known/oauth-authorization-server")
        if match := ROUTE.fullmatch(path):
            return self.endpoint(match["prefix"] or "", match["endpoint"])
        self.reply_text(404, "stub: no such endpoint\n")

    def endpoint(self, prefix, name):
        if name == "token":
            self.require("POST") and self.token()
        elif name == "revoke":
            self.require("POST") and self.revoke()
        elif name == "introspect":
            self.require("POST") and self.introspect()
        elif name == "device_authorization":
            self.require("POST") and self.device_authorization(prefix)
        elif name == "userinfo":
            self.require("GET", "POST") and self.userinfo()
        elif name.startswith(".well-known/"):
            self.require("GET") and self.metadata(prefix)
        elif name == "jwks":
            self.require("GET") and self.reply_json(200, {"keys": []})
        elif name == "register":
            self.require("POST") and self.register(prefix)
        elif name.startswith("register/"):
            self.require("DELETE") and self.delete_registration(name[len("register/"):])
        elif name == "device":
            self.reply_text(200, "stub: nothing to approve here; polls follow the device code's script\n")
        else:
            self.reply_text(501, "stub: the authorization endpoint is not implemented\n")

    # OAuth endpoints.

    def token(self):
        state, form, query = self.server.state, self.form, self.query
        grant = form.get("grant_type", "")
        with state.lock:
            state.token_requests += 1
            state.grant_types[grant or "(none)"] += 1
        self.client_auth()
        if state.outage:
            return self.reply_text(state.outage, "stub: outage\n")
        delay = query_number(query, "delay", 0.0)
        seconds = query_number(query, "expires_in", state.access_seconds, int)
        omit = flag(query, "omit_expires")
        if delay > 0:
            time.sleep(delay)  # counted first, so stats see requests whose client gave up
        if grant == "refresh_token" and form.get("refresh_token"):
            status, body = state.refresh_grant(form["refresh_token"], seconds, not flag(query, "no_rotation"), omit)
        elif grant == "client_credentials":
            status, body = state.client_credentials(seconds, omit)
        elif grant == DEVICE_GRANT and form.get("device_code"):
            status, body = state.poll_device(form["device_code"], seconds, omit)
        elif grant in ("refresh_token", DEVICE_GRANT, ""):
            status, body = 400, {"error": "invalid_request", "error_description": "missing parameter"}
        else:
            status, body = 400, {"error": "unsupported_grant_type"}
        if status == 200 and "scope" in form and (grant != "refresh_token" or state.refresh_scope == "echo"):
            body["scope"] = form["scope"]
        if state.answer_delay > 0:
            time.sleep(state.answer_delay)
        self.reply_json(status, body)

    def revoke(self):
        self.client_auth()
        if not self.form.get("token"):
            return self.reply_json(400, {"error": "invalid_request", "error_description": "missing token"})
        self.server.state.revoke(self.form["token"])
        self.reply(200, b"", "application/json")

    def introspect(self):
        self.client_auth()
        if not self.form.get("token"):
            return self.reply_json(400, {"error": "invalid_request", "error_description": "missing token"})
        self.reply_json(200, self.server.state.introspect(self.form["token"]))

    def device_authorization(self, prefix):
        self.client_auth()
        expires_in = query_number(self.query, "expires_in", 600, int)
        interval = query_number(self.query, "interval", 5, int)
        script = self.query.get("script", "ok").split(",")
        if not all(re.fullmatch(r"[a-z_]+", outcome) for outcome in script):
            raise BadQuery("script")
        code = self.server.state.new_device(script, expires_in)
        user_code = "".join(secrets.choice("BCDFGHJKLMNPQRSTVWXZ") for _ in range(8))
        user_code = f"{user_code[:4]}-{user_code[4:]}"
        verification = f"{self.server.base_url}{prefix}/device"
        self.reply_json(200, {
            "device_code": code,
            "user_code": user_code,
            "verification_uri": verification,
            "verification_uri_complete": f"{verification}?user_code={user_code}",
            "expires_in": expires_in,
            "interval": interval,
        })

    def userinfo(self):
        scheme, _, token = self.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self.server.state.access_valid(token.strip()):
            return self.reply_json(200, {"sub": "stub-user", "email": "stub@example.test"})
        self.reply_json(401, {"error": "invalid_token"}, (("WWW-Authenticate", 'Bearer error="invalid_token"'),))

    def register(self, prefix):
        kind = prefix[len("/tenants/register-"):] if prefix.startswith("/tenants/register-") else ""
        try:
            metadata = json.loads(self.body or b"{}")
        except ValueError:
            metadata = None
        state = self.server.state
        with state.lock:
            state.registrations.append(metadata)
        if kind in ("401", "403"):
            return self.reply_json(int(kind), {"error": "invalid_token"})
        if kind in ("invalid_client_metadata", "invalid_redirect_uri"):
            return self.reply_json(400, {"error": kind, "error_description": f"stub: {kind}"})
        if kind != "ok" or not isinstance(metadata, dict):
            return self.reply_json(400, {"error": "invalid_client_metadata"})
        client_id = "stub-client-" + secrets.token_hex(6)
        token = new_secret("registration")
        with state.lock:
            state.registered[client_id] = token
        answer = dict(metadata, client_id=client_id, registration_access_token=token,
                      registration_client_uri=f"{self.server.base_url}{prefix}/register/{client_id}")
        self.reply_json(201, answer)

    def delete_registration(self, client_id):
        scheme, _, token = self.headers.get("Authorization", "").partition(" ")
        state = self.server.state
        with state.lock:
            known = scheme.lower() == "bearer" and state.registered.get(client_id) == token.strip()
            if known:
                del state.registered[client_id]
        if not known:
            return self.reply_json(401, {"error": "invalid_token"})
        self.reply(204, b"", "application/json")

    def metadata(self, prefix):
        base = self.server.base_url + prefix
        extra = {"registration_endpoint": f"{base}/register"} if prefix.startswith("/tenants/register-") else {}
        self.reply_json(200, {
            **extra,
            "issuer": EVIL_ISSUER if prefix == "/mismatch" else base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "revocation_endpoint": f"{base}/revoke",
            "introspection_endpoint": f"{base}/introspect",
            "device_authorization_endpoint": f"{base}/device_authorization",
            "userinfo_endpoint": f"{base}/userinfo",
            "jwks_uri": f"{base}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials", DEVICE_GRANT],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["openid", "email", "profile", "offline_access"],
        })

    # Admin endpoints.

    def admin(self, name):
        state = self.server.state
        if name == "issue" and self.require("POST"):
            self.reply_json(200, state.issue(query_number(self.query, "expires_in", state.access_seconds, int)))
        elif name == "stats" and self.require("GET"):
            self.reply_json(200, state.stats())
        elif name == "reset" and self.require("POST"):
            with state.lock:
                state.reset()
            self.reply_json(200, {"reset": True})
        elif name == "check" and self.require("GET", "POST"):
            token = self.form.get("refresh_token") or self.query.get("refresh_token", "")
            self.reply_json(200, state.check(token))
        elif name == "outage" and self.require("POST"):
            with state.lock:
                state.outage = query_number(self.query, "status", 0, int)
            self.reply_json(200, {"outage": state.outage})
        elif name not in ("issue", "stats", "reset", "check", "outage"):
            self.reply_text(404, "stub: no such admin endpoint\n")

    # Faults.

    def fault(self, kind, endpoint):
        query = self.query
        if kind == "hang":
            self.hang()
        elif kind == "slow":
            delay = query_number(query, "delay", 5.0)
            query.pop("delay", None)  # or the token endpoint would sleep a second time
            time.sleep(max(delay, 0))
            self.endpoint("/fault/slow", endpoint)
        elif kind in TEXT_STATUSES:
            status = TEXT_STATUSES[kind]
            retry = (("Retry-After", "2"),) if kind == "503-retry-after" else ()
            self.reply_text(status, f"stub: {status} {self.responses[status][0]}\n", retry)
        elif kind in HTML_STATUSES:
            self.reply(HTML_STATUSES[kind], HTML_PAGE, "text/html; charset=utf-8")
        elif kind == "empty":
            self.reply(200, b"", "application/json")
        elif kind == "wrong-shape":
            self.reply_json(200, {"accessToken": 5})
        elif kind == "wrong-shape-array":
            self.reply_json(200, ["access_token"])
        elif kind == "invalid-json":
            self.reply(200, b'{"access_token": "abc",', "application/json")
        elif kind in ("oversized", "oversized-chunked"):
            self.oversized(query_number(query, "size", 2 << 20, int), chunked=kind == "oversized-chunked")
        elif kind in OAUTH_ERRORS:
            status = query_number(query, "status", OAUTH_ERRORS[kind], int)
            basic = (("WWW-Authenticate", 'Basic realm="stub"'),) if kind == "invalid_client" else ()
            self.reply_json(status, {"error": kind, "error_description": f"stub fault {kind}"}, basic)
        elif kind == "error-200":
            quirk = {"error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."}
            self.reply_json(200, quirk)
        elif kind == "reset":
            self.reset_connection()
        else:
            self.reply_text(404, "stub: unknown fault kind\n")

    def hang(self):
        # Logged now: the line would otherwise only appear when the client gives up.
        self.log("hang")
        self.close_connection = True
        connection, stopping = self.connection, self.server.stopping
        while not stopping.is_set():
            readable, _, _ = select.select([connection], [], [], 0.5)
            # Readable means the client closed (b"") or sent more, which is discarded.
            if readable and not connection.recv(65536):
                return

    def oversized(self, size, chunked):
        # A valid token response, so that only a size limit can make the client refuse it.
        head = b'{"access_token": "stub-oversized", "token_type": "Bearer", "expires_in": 3600, "padding": "'
        tail = b'"}'
        padding = max(size - len(head) - len(tail), 0)
        self.status = 200
        self.close_connection = True  # the client is expected to hang up midway
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(head) + padding + len(tail)))
        self.end_headers()
        block = b"x" * 65536
        pieces = [head] + [block] * (padding // len(block)) + [block[: padding % len(block)], tail]
        for piece in pieces:
            if piece:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    def reset_connection(self):
        # SO_LINGER with a zero timeout turns close() into an RST rather than a FIN.
        self.status = "reset"
        self.close_connection = True
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()


class Server(ThreadingHTTPServer):
    daemon_threads = True  # hung handlers must not keep the process alive
    request_queue_size = 256  # 32 clients connecting at once must not overflow the backlog

    def __init__(self, state_dir, state):
        super().__init__(("127.0.0.1", 0), Handler)
        self.state = state
        self.port = self.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.stopping = threading.Event()
        self.clock_offset = 0.0
        self.log_lock = threading.Lock()
        self.log_file = open(os.path.join(state_dir, "stub.log"), "a", buffering=1, encoding="utf-8")

    def log(self, line):
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}Z"
        with self.log_lock:
            self.log_file.write(f"{stamp} {line}\n")

    def handle_error(self, request, client_address):
        # The default prints a traceback to stderr; a client hanging up is routine here.
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError, OSError)):
            self.log(f"internal error: {type(error).__name__}")


def process_start(pid):
    """The start time of a live, non-zombie PID from /proc (so a reused PID does not count
    as the same process), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in ("Z", "X") else fields[19]


def watch(server, pid, lifetime):
    deadline = time.monotonic() + lifetime
    start = process_start(pid) if pid else None
    reason = None
    while reason is None:
        remaining = deadline - time.monotonic()
        if server.stopping.wait(min(0.5, max(remaining, 0))):
            reason = "signal"
        elif time.monotonic() >= deadline:
            reason = "lifetime over"
        elif pid and (start is None or process_start(pid) != start):
            reason = f"watched pid {pid} gone"
    server.log(f"stopping: {reason}")
    server.stopping.set()  # releases hung connections
    server.shutdown()


def main():
    parser = argparse.ArgumentParser(description="Stub OAuth server for tokenctl's tests (see the docstring).")
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--lifetime", type=float, default=600)
    parser.add_argument("--access-token-seconds", type=int, default=3600)
    parser.add_argument("--answer-delay", type=float, default=0.0)
    parser.add_argument("--clock-offset", type=float, default=0.0)
    parser.add_argument("--revoke-on-rotation", action="store_true")
    parser.add_argument("--refresh-scope", choices=["echo", "silent", "jwt"], default="echo")
    parser.add_argument("--watch-pid", type=int, default=os.getppid(), help="default: the parent; 0: none")
    args = parser.parse_args()

    os.makedirs(args.state_dir, exist_ok=True)
    server = Server(args.state_dir, State(args.access_token_seconds))
    server.state.answer_delay = args.answer_delay
    server.state.revoke_on_rotation = args.revoke_on_rotation
    server.state.refresh_scope = args.refresh_scope
    server.clock_offset = args.clock_offset
    info_path = os.path.join(args.state_dir, "stub.json")
    info = {"base_url": server.base_url, "port": server.port, "pid": os.getpid()}
    # Already listening (the constructor binds and listens): connections queue until
    # serve_forever. The rename makes stub.json appear complete or not at all.
    tmp = f"{info_path}.{os.getpid()}.tmp"
    with open(tmp, "w") as file:
        json.dump(info, file)
    os.replace(tmp, info_path)
    watched = args.watch_pid or "nothing"
    server.log(f"listening on {server.base_url} pid {os.getpid()} watching {watched} lifetime {args.lifetime:g}s")

    # A signal handler must not call shutdown() (it would wait for serve_forever on this
    # very thread); it only wakes the watcher.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: server.stopping.set())
    threading.Thread(target=watch, args=(server, args.watch_pid, args.lifetime), daemon=True).start()
    server.serve_forever(poll_interval=0.5)

    try:
        with open(info_path) as file:
            if json.load(file).get("pid") == os.getpid():
                os.remove(info_path)
    except (OSError, ValueError):
        pass
    # The log stays open (a hung handler may still write to it; lines are flushed as
    # written). Handler threads may be mid-write too; _exit skips the interpreter
    # teardown that could trip over them.
    os._exit(0)


if __name__ == "__main__":
    main()
