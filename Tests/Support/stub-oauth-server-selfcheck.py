#!/usr/bin/env python3
"""Smoke test for stub-oauth-server.py: starts it, exercises every endpoint (including 32
concurrent `curl` refreshes of one refresh token), checks that a hung connection blocks
nothing, that no token or code reaches stub.log, and that the stub stops by itself
(watched PID gone, default parent gone, lifetime over, SIGTERM).

Usage: Tests/Support/stub-oauth-server-selfcheck.py [PATH-TO-STUB]
Prints one line per check; exits 1 at the first failure. Needs python3 and curl.
"""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlencode, urlsplit

STUB = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "stub-oauth-server.py")
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
SECRET_KEYS = ("access_token", "refresh_token", "device_code", "user_code")
secrets_seen = set()  # every token and code the stub handed out, to grep the log for


def check(condition, what, detail=""):
    if not condition:
        print(f"FAIL {what} {detail}")
        sys.exit(1)
    print(f"ok   {what}")


def start(state_dir, *args):
    process = subprocess.Popen([STUB, "--state-dir", state_dir, *args])
    info_path = os.path.join(state_dir, "stub.json")
    for _ in range(100):
        if os.path.exists(info_path):
            with open(info_path) as file:
                return process, json.load(file)
        time.sleep(0.05)
    raise SystemExit(f"FAIL stub did not write {info_path}")


def gone_within(pid, seconds):
    """True once PID is gone or a zombie, polled for up to SECONDS."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


class Client:
    def __init__(self, base):
        self.base = base
        self.port = urlsplit(base).port

    def call(self, method, path, form=None, headers=None, timeout=10):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = dict(headers or {})
        body = None
        if form is not None:
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        connection.request(method, path, body, headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, response, data

    def json(self, method, path, form=None, headers=None):
        status, _, data = self.call(method, path, form, headers)
        value = json.loads(data) if data else None
        if isinstance(value, dict):
            secrets_seen.update(str(value[k]) for k in SECRET_KEYS if k in value)
        return status, value

    def stats(self):
        return self.json("GET", "/_admin/stats")[1]

    def refresh(self, token, query=""):
        return self.json("POST", "/token" + query, {"grant_type": "refresh_token", "refresh_token": token})


def check_metadata(c):
    base = c.base
    for path, issuer in [
        ("/.well-known/openid-configuration", base),
        ("/.well-known/oauth-authorization-server", base),
        ("/tenants/contoso/.well-known/openid-configuration", base + "/tenants/contoso"),
        ("/tenants/contoso/.well-known/oauth-authorization-server", base + "/tenants/contoso"),
        ("/.well-known/oauth-authorization-server/tenants/contoso", base + "/tenants/contoso"),
        ("/mismatch/.well-known/openid-configuration", "https://evil.example"),
        ("/.well-known/oauth-authorization-server/mismatch", "https://evil.example"),
    ]:
        status, doc = c.json("GET", path)
        prefix = issuer if issuer != "https://evil.example" else base + "/mismatch"
        check(
            status == 200 and doc["issuer"] == issuer and doc["token_endpoint"] == prefix + "/token"
            and doc["revocation_endpoint"] == prefix + "/revoke" and doc["introspection_endpoint"] == prefix + "/introspect"
            and doc["device_authorization_endpoint"] == prefix + "/device_authorization",
            f"metadata {path} -> issuer {issuer}", doc,
        )
    check(c.json("GET", "/jwks") == (200, {"keys": []}), "jwks")
    check(c.call("GET", "/authorize")[0] == 501, "authorize is 501")
    check(c.call("GET", "/nowhere")[0] == 404, "unknown path is 404")
    check(c.call("GET", "/token")[0] == 405, "GET /token is 405")


def check_refresh(c):
    status, first = c.json("POST", "/_admin/issue")
    check(status == 200 and set(first) == {"access_token", "refresh_token", "expires_in", "token_type"}, "admin issue", first)
    check(c.json("GET", "/_admin/check?refresh_token=" + first["refresh_token"])[1]["status"] == "current", "issued token is current")
    status, second = c.refresh(first["refresh_token"])
    check(status == 200 and second["refresh_token"] != first["refresh_token"] and second["expires_in"] == 3600
          and second["token_type"] == "Bearer", "refresh rotates", second)
    check(c.json("POST", "/_admin/check", {"refresh_token": first["refresh_token"]})[1]["status"] == "used", "old token is used")
    bearer = {"Authorization": "Bearer " + second["access_token"]}
    check(c.json("GET", "/userinfo", headers=bearer) == (200, {"sub": "stub-user", "email": "stub@example.test"}), "userinfo with a valid token")
    status, error = c.refresh(first["refresh_token"])
    check(status == 400 and error["error"] == "invalid_grant", "reuse is invalid_grant", error)
    check(c.json("GET", "/_admin/check?refresh_token=" + second["refresh_token"])[1]["status"] == "revoked", "reuse revokes the current token too")
    status, response, _ = c.call("GET", "/userinfo", headers=bearer)
    check(status == 401 and response.getheader("WWW-Authenticate") == 'Bearer error="invalid_token"', "userinfo after family revocation is 401")
    check(c.refresh("nonsense")[1]["error"] == "invalid_grant", "unknown refresh token is invalid_grant")
    check(c.json("GET", "/_admin/check?refresh_token=nonsense")[1]["status"] == "unknown", "check of an unknown token")

    _, third = c.json("POST", "/_admin/issue")
    status, kept = c.refresh(third["refresh_token"], "?no_rotation=1&expires_in=7")
    check(status == 200 and "refresh_token" not in kept and kept["expires_in"] == 7, "no_rotation and expires_in", kept)
    status, omitted = c.refresh(third["refresh_token"], "?omit_expires=1")
    check(status == 200 and "expires_in" not in omitted, "omit_expires; no_rotation left the token current", omitted)
    status, expired = c.refresh(omitted["refresh_token"], "?expires_in=0")
    status = c.call("GET", "/userinfo", headers={"Authorization": "Bearer " + expired["access_token"]})[0]
    check(status == 401, "an expired access token is refused by userinfo")

    introspect = lambda token: c.json("POST", "/introspect", {"token": token})
    status, active = introspect(omitted["access_token"])
    check(status == 200 and active["active"] is True and active["token_type"] == "Bearer"
          and 3500 < active["exp"] - time.time() <= 3600, "introspect a valid access token", active)
    check(introspect(expired["refresh_token"])[1] == {"active": True}, "introspect a current refresh token")
    check(introspect(omitted["refresh_token"])[1] == {"active": False}, "introspect a used refresh token")
    check(introspect(expired["access_token"])[1] == {"active": False}, "introspect an expired access token")
    check(introspect("nonsense")[1] == {"active": False}, "introspect an unknown token")
    check(c.json("POST", "/tenants/x/introspect", {})[1]["error"] == "invalid_request", "introspect without a token")
    check(c.call("GET", "/introspect")[0] == 405, "GET /introspect is 405")
    check(c.call("POST", "/revoke", {"token": omitted["access_token"]})[0] == 200, "revoke an access token")
    check(introspect(omitted["access_token"])[1] == {"active": False}, "introspect a revoked access token")
    check(c.call("POST", "/revoke", {"token": expired["refresh_token"], "token_type_hint": "refresh_token"})[0] == 200, "revoke a refresh token")
    check(c.json("GET", "/_admin/check?refresh_token=" + expired["refresh_token"])[1]["status"] == "revoked", "revoked token is revoked")
    check(c.call("POST", "/revoke", {"token": "nonsense"})[0] == 200, "revoke an unknown token is 200")

    status, cc = c.json("POST", "/token", {"grant_type": "client_credentials", "client_id": "a", "client_secret": "s"})
    check(status == 200 and "refresh_token" not in cc and cc["access_token"], "client_credentials", cc)
    status, _ = c.json("POST", "/token", {"grant_type": "client_credentials"}, {"Authorization": "Basic YTpi"})
    check(c.json("POST", "/token", {"grant_type": "password"})[1]["error"] == "unsupported_grant_type", "unsupported grant type")
    check(c.json("POST", "/tenants/x/token", {"grant_type": "refresh_token"})[1]["error"] == "invalid_request", "missing refresh_token (tenant path)")
    stats = c.stats()
    check(stats["client_auth"]["post"] == 1 and stats["client_auth"]["basic"] == 1 and stats["reuse_detected"] == 1
          and stats["grant_types"]["client_credentials"] == 2, "client_auth, reuse and grant_types counted", stats)


def check_device(c):
    c.json("POST", "/_admin/reset")
    status, grant = c.json("POST", "/device_authorization?interval=0&script=authorization_pending,slow_down,ok", {"client_id": "x"})
    check(status == 200 and grant["interval"] == 0 and grant["expires_in"] == 600
          and grant["verification_uri"] == c.base + "/device" and grant["user_code"] in grant["verification_uri_complete"],
          "device_authorization", grant)
    poll = {"grant_type": DEVICE_GRANT, "device_code": grant["device_code"], "client_id": "x"}
    outcomes = []
    for _ in range(4):
        status, body = c.json("POST", "/token", poll)
        outcomes.append("ok" if status == 200 and body.get("refresh_token") else body.get("error"))
        time.sleep(0.1)
    check(outcomes == ["authorization_pending", "slow_down", "ok", "ok"], "device script, last outcome repeats", outcomes)
    _, denied = c.json("POST", "/device_authorization?interval=1&script=access_denied")
    poll["device_code"] = denied["device_code"]
    check([c.json("POST", "/token", poll)[1]["error"] for _ in range(2)] == ["access_denied"] * 2, "access_denied")
    _, declined = c.json("POST", "/device_authorization?script=authorization_pending,authorization_declined")
    poll["device_code"] = declined["device_code"]
    check([c.json("POST", "/token", poll)[1]["error"] for _ in range(2)] == ["authorization_pending", "authorization_declined"], "authorization_declined")
    _, lapsed = c.json("POST", "/device_authorization?expires_in=0&script=authorization_pending")
    poll["device_code"] = lapsed["device_code"]
    check(c.json("POST", "/token", poll)[1]["error"] == "expired_token", "device code past expires_in is expired_token")
    poll["device_code"] = "nonsense"
    check(c.json("POST", "/token", poll)[1]["error"] == "invalid_grant", "unknown device code")
    check(c.call("POST", "/device_authorization?script=ok;rm")[0] == 400, "bad script is 400")
    polls = c.stats()["device_polls"]
    gaps = [b - a for a, b in zip(polls["1"], polls["1"][1:])]
    check(len(polls["1"]) == 4 and all(0.09 < gap < 1 for gap in gaps) and len(polls["4"]) == 1, "device poll times recorded", polls)


def check_race(c):
    c.json("POST", "/_admin/reset")
    _, tokens = c.json("POST", "/_admin/issue")
    argv = ["curl", "-s", "-o", "-", "-w", "\n%{http_code}", "--data-urlencode", "grant_type=refresh_token",
            "--data-urlencode", "refresh_token=" + tokens["refresh_token"], c.base + "/token?delay=0.5"]
    started = time.monotonic()
    processes = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) for _ in range(32)]
    results = [p.communicate()[0].rsplit("\n", 1) for p in processes]
    elapsed = time.monotonic() - started
    codes = sorted(code for _, code in results)
    errors = [json.loads(body).get("error") for body, code in results if code == "400"]
    for body, code in results:
        if code == "200":
            secrets_seen.update(json.loads(body)[k] for k in ("access_token", "refresh_token"))
    stats = c.stats()
    check(codes.count("200") == 1 and codes.count("400") == 31 and errors == ["invalid_grant"] * 31,
          f"32 concurrent curl refreshes: 1 success, 31 invalid_grant in {elapsed:.2f}s", codes)
    check(stats["token_requests"] == 32 and stats["requests"]["/token"] == 32 and stats["reuse_detected"] == 31
          and stats["current_refresh_tokens"] == 0 and stats["client_auth"]["none"] == 32, "race stats", stats)


def check_faults(c):
    def fault(kind, endpoint="token", query=""):
        return c.call("POST", f"/fault/{kind}/{endpoint}{query}", {"grant_type": "refresh_token", "refresh_token": "x"})

    for kind, status in [("500", 500), ("502", 502), ("503", 503)]:
        code, response, body = fault(kind)
        check(code == status and response.getheader("Content-Type").startswith("text/plain") and body, f"fault {kind}")
    code, response, _ = fault("503-retry-after", "revoke")
    check(code == 503 and response.getheader("Retry-After") == "2", "fault 503-retry-after")
    for kind, status in [("html", 200), ("502-html", 502)]:
        code, response, body = fault(kind, "userinfo")
        check(code == status and response.getheader("Content-Type").startswith("text/html") and body.startswith(b"<!DOCTYPE html>"), f"fault {kind}")
    code, response, body = fault("empty")
    check(code == 200 and body == b"" and response.getheader("Content-Type") == "application/json", "fault empty")
    check(fault("wrong-shape")[2] == b'{"accessToken": 5}', "fault wrong-shape")
    check(json.loads(fault("wrong-shape-array")[2]) == ["access_token"], "fault wrong-shape-array")
    check(fault("invalid-json")[2] == b'{"access_token": "abc",', "fault invalid-json")
    for kind, status in [("invalid_grant", 400), ("invalid_request", 400), ("slow_down", 400), ("temporarily_unavailable", 503), ("invalid_client", 401)]:
        code, response, body = fault(kind, "device_authorization")
        check(code == status and json.loads(body)["error"] == kind, f"fault {kind} -> {status}")
    check(response.getheader("WWW-Authenticate") == 'Basic realm="stub"', "invalid_client has WWW-Authenticate: Basic")
    check(fault("invalid_grant", query="?status=401")[0] == 401, "status= overrides an error's status")
    code, _, body = fault("error-200")
    check(code == 200 and json.loads(body)["error"] == "bad_verification_code", "fault error-200")
    check(fault("nonsense")[0] == 404, "unknown fault kind is 404")
    check(c.call("GET", "/fault/500/nonsense")[0] == 404, "unknown fault endpoint is 404")

    try:
        fault("reset")
        check(False, "fault reset")
    except (ConnectionError, http.client.RemoteDisconnected) as error:
        check(True, f"fault reset ({type(error).__name__})")

    # Oversized: the headers say 2 MiB; read only a little, then hang up.
    for kind in ("oversized", "oversized-chunked"):
        connection = http.client.HTTPConnection("127.0.0.1", c.port, timeout=10)
        connection.request("GET", f"/fault/{kind}/token")
        response = connection.getresponse()
        length = response.getheader("Content-Length")
        head = response.read(64)
        connection.close()
        shape = int(length or 0) >= 2 << 20 if kind == "oversized" else length is None and response.getheader("Transfer-Encoding") == "chunked"
        check(response.status == 200 and shape and head.startswith(b'{"access_token"'), f"fault {kind} (client hung up early)")
    status, response, body = c.call("GET", "/fault/oversized-chunked/token?size=3000000")
    check(status == 200 and len(body) == 3000000 and json.loads(body)["token_type"] == "Bearer", "oversized-chunked read to the end is a valid 3 MB JSON")

    started = time.monotonic()
    status, doc = c.json("GET", "/fault/slow/.well-known/openid-configuration?delay=1")
    elapsed = time.monotonic() - started
    check(status == 200 and doc["issuer"] == c.base + "/fault/slow" and 1 <= elapsed < 2, f"fault slow answers after {elapsed:.2f}s")
    _, tokens = c.json("POST", "/_admin/issue")
    started = time.monotonic()
    status, _ = c.json("POST", "/fault/slow/token?delay=0.3", {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]})
    elapsed = time.monotonic() - started
    check(status == 200 and 0.3 <= elapsed < 0.6, f"slow token refresh works, delay applied once ({elapsed:.2f}s)")

    hung = []
    for endpoint in ("token", "revoke", "device_authorization", "userinfo", ".well-known/openid-configuration"):
        sock = socket.create_connection(("127.0.0.1", c.port))
        body = b"grant_type=refresh_token&refresh_token=x"
        sock.sendall(b"POST /fault/hang/%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s"
                     % (endpoint.encode(), len(body), body))
        hung.append(sock)
    time.sleep(0.3)
    started = time.monotonic()
    c.stats()
    elapsed = time.monotonic() - started
    check(elapsed < 0.5, f"5 hung connections do not block others ({elapsed * 1000:.0f} ms)")
    hung[0].settimeout(0.5)
    try:
        answer = hung[0].recv(1)
    except TimeoutError:
        answer = None
    check(answer is None, "hang sends nothing and keeps the connection open")
    for sock in hung:
        sock.close()
    time.sleep(0.7)
    check(c.stats()["requests"]["/fault/hang/token"] == 1, "faults are counted per path")


def check_log(state_dir):
    with open(os.path.join(state_dir, "stub.log")) as file:
        log = file.read()
    leaked = [s for s in secrets_seen if s in log]
    check(not leaked and len(secrets_seen) > 20, f"no token or code among {len(secrets_seen)} in stub.log", leaked[:3])
    check("POST /token?delay=0.5 400" in log and "GET /fault/slow/.well-known/openid-configuration?delay=1 200" in log
          and "POST /fault/hang/token hang" in log and "POST /fault/reset/token reset" in log, "log lines show method, path, tuning query, status")
    check("refresh_token=" not in log, "no refresh_token= in the log")


def check_reset(c):
    c.json("POST", "/_admin/reset")
    stats = c.stats()
    check(stats["requests"] == {} and stats["token_requests"] == 0 and stats["current_refresh_tokens"] == 0
          and stats["device_polls"] == {}, "admin reset clears everything", stats)


def check_stopping(tmp):
    # Lifetime over, with a hung connection open: it must not keep the stub alive.
    state_dir = os.path.join(tmp, "lifetime")
    os.mkdir(state_dir)
    process, info = start(state_dir, "--lifetime", "2")
    sock = socket.create_connection(("127.0.0.1", info["port"]))
    sock.sendall(b"GET /fault/hang/userinfo HTTP/1.1\r\nHost: x\r\n\r\n")
    started = time.monotonic()
    process.wait(timeout=5)
    sock.close()
    elapsed = time.monotonic() - started
    check(process.returncode == 0 and elapsed < 2.6 and not os.path.exists(os.path.join(state_dir, "stub.json")),
          f"exits after --lifetime 2 with a hung connection ({elapsed:.2f}s), stub.json removed")

    state_dir = os.path.join(tmp, "watch")
    os.mkdir(state_dir)
    sleeper = subprocess.Popen(["sleep", "60"])
    process, _ = start(state_dir, "--watch-pid", str(sleeper.pid))
    time.sleep(0.6)
    check(process.poll() is None, "alive while the watched PID lives")
    sleeper.kill()
    sleeper.wait()
    started = time.monotonic()
    process.wait(timeout=5)
    check(time.monotonic() - started < 1.2, f"exits when the watched PID dies ({time.monotonic() - started:.2f}s)")

    state_dir = os.path.join(tmp, "parent")
    os.mkdir(state_dir)
    subprocess.run(["sh", "-c", f'"$0" --state-dir "$1" 2>/dev/null & sleep 1', STUB, state_dir], check=True)
    with open(os.path.join(state_dir, "stub.json")) as file:
        pid = json.load(file)["pid"]
    check(gone_within(pid, 1.2), "exits when its parent (the default watched PID) dies")

    state_dir = os.path.join(tmp, "term")
    os.mkdir(state_dir)
    process, _ = start(state_dir)
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=3)
    check(process.returncode == 0 and not os.path.exists(os.path.join(state_dir, "stub.json")), "exits on SIGTERM")


def check_revoke_on_rotation(tmp):
    """--revoke-on-rotation: a rotation kills the family's earlier access tokens, and only
    those; without it they live on (check_refresh's userinfo with the second token)."""
    state_dir = os.path.join(tmp, "revoking")
    os.mkdir(state_dir)
    process, info = start(state_dir, "--lifetime", "60", "--revoke-on-rotation")
    try:
        c = Client(info["base_url"])
        active = lambda token: c.json("POST", "/introspect", {"token": token})[1].get("active")
        _, first = c.json("POST", "/_admin/issue")
        _, other = c.json("POST", "/_admin/issue")
        status, second = c.refresh(first["refresh_token"])
        check(status == 200 and active(second["access_token"]) is True, "revoke-on-rotation: the new token is active", second)
        check(active(first["access_token"]) is False, "revoke-on-rotation: the earlier access token is revoked")
        check(active(other["access_token"]) is True, "revoke-on-rotation: another family's token lives on")
        status, kept = c.refresh(second["refresh_token"], "?no_rotation=1")
        check(status == 200 and active(second["access_token"]) is True, "revoke-on-rotation: no rotation, no revocation")
    finally:
        process.terminate()
        process.wait()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        state_dir = os.path.join(tmp, "main")
        os.mkdir(state_dir)
        process, info = start(state_dir, "--lifetime", "120")
        check(info["base_url"] == f"http://127.0.0.1:{info['port']}" and info["pid"] == process.pid, "stub.json", info)
        try:
            c = Client(info["base_url"])
            check_metadata(c)
            check_refresh(c)
            check_device(c)
            check_race(c)
            check_faults(c)
            check_log(state_dir)
            check_reset(c)
        finally:
            process.terminate()
            process.wait()
        check_revoke_on_rotation(tmp)
        check_stopping(tmp)
    print("all checks passed")


if __name__ == "__main__":
    main()
