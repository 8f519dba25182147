#!/usr/bin/python3
"""glewlwyd (Debian's package) on 127.0.0.1 with OpenID Connect dynamic client
registration (RFC 7591) and registration management (RFC 7592), for the tests and the demo.

    glewlwyd-server.py start STATE_DIR [--watch-pid PID] [--lifetime SECONDS]
    glewlwyd-server.py stop STATE_DIR

`start` creates a private SQLite database from glewlwyd's own schema, configures it (a
database user backend with `ada` and `admin`, random passwords; an OpenID Connect plugin
instance `oidc` that lets anyone register a client), starts /usr/bin/glewlwyd on a free
port of 127.0.0.1, waits until discovery answers, writes STATE_DIR/server.json and returns
0. A supervisor process stops glewlwyd when the watched process (by default the one that
ran `start`) is gone, after the lifetime (default 20 minutes), or on `stop`. Everything
is logged to STATE_DIR/server.log: glewlwyd's INFO lines (client ids, scopes, user names,
never a token, code or password) and the supervisor's.

Environment read at `start`: GLEWLWYD_ACCESS_TOKEN_SECONDS (default 3600),
GLEWLWYD_SERVER_WATCH_PID (like --watch-pid), GLEWLWYD_DEVICE_ENABLED (1: the device
authorization grant on). See Tests/AuthServer/README.md.
Standard library only: Debian's python3 runs it.
"""
import base64
import ctypes
import gzip
import hashlib
import json
import os
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import supervised_server  # noqa: E402
from supervised_server import remove, write_atomically  # noqa: E402

GLEWLWYD = "/usr/bin/glewlwyd"
LIBRARY = "/usr/lib/glewlwyd"
# The schema with the database modules and `admin`, as the package ships it: the
# dbconfig-common copy first, because images that drop /usr/share/doc keep it.
SCHEMAS = (
    "/usr/share/dbconfig-common/data/glewlwyd/install/sqlite3",
    "/usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz",
)
PLUGIN = "oidc"
DEFAULT_LIFETIME = 20 * 60
# glewlwyd loads its modules and the RSA key in well under a second; a slow machine
# running a parallel build can take a few.
START_TIMEOUT = 30
# glewlwyd's own default is 150,000 rounds (~0.1 s of CPU per sign-in); the hash keeps
# its count, so test users can have a cheap one.
PBKDF2_ROUNDS = 1000
# Scopes tokenctl's `oidc` type asks for. glewlwyd grants a client only scopes the user
# holds; `offline_access` means nothing to it (every code grant gets a refresh token),
# but an unknown scope in the request would be dropped silently.
USER_SCOPES = ("openid", "profile", "email", "offline_access")


SERVER = supervised_server.Server(
    "glewlwyd-server.py", __file__, "GLEWLWYD_SERVER_WATCH_PID", start_seconds=START_TIMEOUT, stop_seconds=10,
    abort_seconds=5, start_slack=5, private=True)


def stamp():
    return time.strftime("%H:%M:%S")


# --- start -----------------------------------------------------------------------------


def cmd_start(args):
    if not os.access(GLEWLWYD, os.X_OK):
        SERVER.fail(f"{GLEWLWYD} is missing: apt-get install glewlwyd (`make deps` does)")
    SERVER.start(args)
    return 0


# --- fixtures --------------------------------------------------------------------------


def password_hash(password):
    """glewlwyd's database backend format: base64(PBKDF2-HMAC-SHA256(32 bytes) || salt),
    then ",rounds" (src/misc.c generate_digest_pbkdf2, src/user/database.c)."""
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    salt = "".join(secrets.choice(alphabet) for _ in range(16)).encode()
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, PBKDF2_ROUNDS, 32)
    return base64.b64encode(digest + salt).decode() + f",{PBKDF2_ROUNDS}"


def read_schema():
    for path in SCHEMAS:
        try:
            if path.endswith(".gz"):
                with gzip.open(path, "rt", encoding="utf-8") as f:
                    return f.read()
            with open(path, encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            continue
    raise RuntimeError("glewlwyd's SQLite schema is missing (looked for " + ", ".join(SCHEMAS) + ")")


def signing_key(state_dir):
    """An RSA key for RS256, created once per state dir: (private PEM, public PEM)."""
    private = os.path.join(state_dir, "oidc-rsa.pem")
    if not os.path.exists(private):
        tmp = f"{private}.{os.getpid()}.tmp"
        old_umask = os.umask(0o077)
        try:
            subprocess.run(
                ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", tmp],
                check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        finally:
            os.umask(old_umask)
        os.replace(tmp, private)
    public = subprocess.run(
        ["openssl", "pkey", "-in", private, "-pubout"],
        check=True, stdin=subprocess.DEVNULL, capture_output=True, text=True).stdout
    with open(private, encoding="ascii") as f:
        return f.read(), public


def plugin_parameters(issuer, key, public_key, access_token_seconds):
    """The `oidc` plugin instance (keys as src/plugin/protocol_oidc.c 2.7.5 reads them)."""
    return {
        "iss": issuer,
        "jwt-type": "rsa",
        "jwt-key-size": "256",  # RS256
        "key": key,
        "cert": public_key,
        "access-token-duration": access_token_seconds,
        "refresh-token-duration": 14 * 24 * 3600,
        "code-duration": 600,
        # Rotation (RFC 9700 §4.14.2): each refresh returns a new refresh token and
        # disables the one presented.
        "refresh-token-one-use": "always",
        "refresh-token-rolling": True,
        "allow-non-oidc": True,
        "auth-type-code-enabled": True,
        # RFC 6749 §4.1.2: a code presented twice revokes what the first use issued.
        "auth-type-code-revoke-replayed": True,
        "auth-type-refresh-enabled": True,
        "auth-type-client-enabled": True,  # client credentials, for confidential clients
        "auth-type-token-enabled": False,
        "auth-type-implicit-enabled": False,
        "auth-type-none-enabled": False,
        "auth-type-password-enabled": False,
        # GLEWLWYD_DEVICE_ENABLED=1 turns the device grant on (RFC 8628), with which
        # glewlwyd 2.7.5's registration refuses a client that asks for it.
        "auth-type-device-enabled": os.environ.get("GLEWLWYD_DEVICE_ENABLED") == "1",
        "subject-type": "public",
        "pkce-allowed": True,
        "pkce-method-plain-allowed": False,
        "pkce-required-public-client": True,
        # RFC 9207: `iss` in the authorization response.
        "oauth-as-iss-id": True,
        "name-claim": "on-demand",
        "name-claim-scope": ["profile"],
        "email-claim": "on-demand",
        "email-claim-scope": ["email"],
        # RFC 7009 revocation and RFC 7662 introspection, for clients that authenticate.
        "introspection-revocation-allowed": True,
        "introspection-revocation-allow-target-client": True,
        # RFC 7591 without an initial access token (no register-client-auth-scope), and
        # RFC 7592 read, update and delete with the registration access token.
        "register-client-allowed": True,
        "register-client-management-allowed": True,
        "session-management-allowed": False,
        "request-parameter-allow": False,
    }


def create_database(path, issuer, users, key, public_key, access_token_seconds):
    remove(os.path.dirname(path), *(os.path.basename(path) + s for s in ("", "-journal", "-wal", "-shm")))
    old_umask = os.umask(0o077)
    try:
        db = sqlite3.connect(path)
    finally:
        os.umask(old_umask)
    try:
        # A throw-away database: no fsync while it is filled (1 s less on a busy disk). WAL
        # persists in the file, and lets the tests' parallel requests read while one writes.
        db.execute("PRAGMA synchronous = OFF")
        db.execute("PRAGMA journal_mode = WAL")
        db.executescript(read_schema())
        with db:
            for scope in USER_SCOPES:
                db.execute(
                    "INSERT OR IGNORE INTO g_scope (gs_name, gs_display_name, gs_description, gs_password_required,"
                    " gs_password_max_age) VALUES (?, ?, ?, 0, 0)", (scope, scope, f"{scope} (test)"))
            for user in users:
                if user["username"] != "admin":
                    db.execute(
                        "INSERT INTO g_user (gu_username, gu_name, gu_email, gu_enabled) VALUES (?, ?, ?, 1)",
                        (user["username"], user["name"], user["email"]))
                db.execute(
                    "DELETE FROM g_user_password WHERE gu_id = (SELECT gu_id FROM g_user WHERE gu_username = ?)",
                    (user["username"],))
                db.execute(
                    "INSERT INTO g_user_password (gu_id, guw_password)"
                    " VALUES ((SELECT gu_id FROM g_user WHERE gu_username = ?), ?)",
                    (user["username"], password_hash(user["password"])))
                for scope in user["scopes"]:
                    db.execute("INSERT OR IGNORE INTO g_user_scope (gus_name) VALUES (?)", (scope,))
                    db.execute(
                        "INSERT INTO g_user_scope_user (gu_id, gus_id) SELECT gu_id, gus_id FROM g_user, g_user_scope"
                        " WHERE gu_username = ? AND gus_name = ? AND NOT EXISTS (SELECT 1 FROM g_user_scope_user u"
                        " WHERE u.gu_id = g_user.gu_id AND u.gus_id = g_user_scope.gus_id)",
                        (user["username"], scope))
            db.execute(
                "INSERT INTO g_plugin_module_instance (gpmi_module, gpmi_name, gpmi_display_name, gpmi_parameters,"
                " gpmi_enabled) VALUES ('oidc', ?, 'OpenID Connect (tokenctl tests)', ?, 1)",
                (PLUGIN, json.dumps(plugin_parameters(issuer, key, public_key, access_token_seconds))))
    finally:
        db.close()


def write_config(path, state_dir, port):
    base = f"http://127.0.0.1:{port}"
    text = f"""# Written by Tests/Support/glewlwyd-server.py for one run; see Tests/AuthServer/README.md.
port={port}
bind_address="127.0.0.1"
external_url="{base}"
login_url="login.html"
api_prefix="api"
log_mode="file"
log_level="INFO"
log_file="{state_dir}/server.log"
cookie_secure=0
cookie_same_site="empty"
session_expiration=3600
session_key="GLEWLWYD2_SESSION_ID"
admin_session_authentication="cookie"
profile_session_authentication="cookie"
allow_multiple_user_per_session=false
login_api_enabled=true
plugin_api_run_enabled=""
add_x_frame_option_header_deny=true
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="{LIBRARY}/user"
client_module_path="{LIBRARY}/client"
user_auth_scheme_module_path="{LIBRARY}/scheme"
plugin_module_path="{LIBRARY}/plugin"
# No use_secure_connection, even false: 2.7.5 then insists on certificate files.
hash_algorithm="SHA512"
database =
{{
  type = "sqlite3"
  path = "{state_dir}/glewlwyd.db"
}};
"""
    write_atomically(path, text)


def port_taken(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
            return False
        except OSError:
            return True


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the supervisor --------------------------------------------------------------------


def die_with_parent():
    """In glewlwyd, before exec: SIGTERM when the supervisor dies, even by SIGKILL."""
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def fetch_json(url, timeout=2):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=timeout) as response:
        return json.load(response)


def serve(args):
    state_dir = os.path.abspath(args.state_dir)
    started = time.monotonic()
    log_path = os.path.join(state_dir, "server.log")
    try:
        access_token_seconds = int(os.environ.get("GLEWLWYD_ACCESS_TOKEN_SECONDS") or 3600)
    except ValueError:
        print(f"{stamp()} GLEWLWYD_ACCESS_TOKEN_SECONDS must be a number of seconds", file=sys.stderr)
        return 1
    key, public_key = signing_key(state_dir)
    users = [
        {"username": "ada", "password": secrets.token_urlsafe(18), "name": "Ada Lovelace",
         "email": "ada@example.org", "scopes": list(USER_SCOPES) + ["g_profile"]},
        {"username": "admin", "password": secrets.token_urlsafe(18), "name": "The Administrator",
         "email": "", "scopes": []},  # g_admin and g_profile: the schema gives them
    ]

    stop = {"signal": None}

    def on_signal(signum, _frame):
        stop["signal"] = signum

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)

    glewlwyd = None
    discovery = None
    # The free port is only free until glewlwyd binds it: on a clash, another port.
    for _ in range(3):
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        issuer = f"{base}/api/{PLUGIN}"
        create_database(os.path.join(state_dir, "glewlwyd.db"), issuer, users, key, public_key, access_token_seconds)
        config = os.path.join(state_dir, "glewlwyd.conf")
        write_config(config, state_dir, port)
        log = open(log_path, "ab")
        glewlwyd = subprocess.Popen(
            [GLEWLWYD, f"--config-file={config}"], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            close_fds=True, cwd=state_dir, preexec_fn=die_with_parent)
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while glewlwyd.poll() is None and time.monotonic() < deadline and stop["signal"] is None:
            try:
                discovery = fetch_json(f"{issuer}/.well-known/openid-configuration")
                break
            except (OSError, ValueError):
                time.sleep(0.05)
        if discovery is not None or stop["signal"] is not None:
            break
        if glewlwyd.poll() is None:
            print(f"{stamp()} glewlwyd did not answer within {START_TIMEOUT} s", file=sys.stderr)
            glewlwyd.kill()
            glewlwyd.wait()
            return 1
        print(f"{stamp()} glewlwyd exited with status {glewlwyd.returncode}", file=sys.stderr)
        if not port_taken(port):
            break  # not a clash: its own error, in the log above
    if discovery is None:
        if glewlwyd and glewlwyd.poll() is None:
            glewlwyd.terminate()
            glewlwyd.wait()
        return 1
    if discovery.get("issuer") != issuer or not discovery.get("registration_endpoint"):
        print(f"{stamp()} unexpected discovery document: issuer {discovery.get('issuer')!r}, "
              f"registration_endpoint {discovery.get('registration_endpoint')!r}", file=sys.stderr)
        glewlwyd.terminate()
        glewlwyd.wait()
        return 1

    info = {
        "issuer": issuer,
        "base_url": base,
        "port": port,
        "pid": os.getpid(),
        "glewlwyd_pid": glewlwyd.pid,
        "plugin": PLUGIN,
        "endpoints": {
            "discovery": f"{issuer}/.well-known/openid-configuration",
            "authorization": discovery["authorization_endpoint"],
            "token": discovery["token_endpoint"],
            "registration": discovery["registration_endpoint"],
            "revocation": discovery.get("revocation_endpoint"),
            "introspection": discovery.get("introspection_endpoint"),
            "userinfo": discovery["userinfo_endpoint"],
            "jwks": discovery["jwks_uri"],
            # glewlwyd's own API, for the scripted browser: sign in, then grant scopes.
            "login": f"{base}/api/auth/",
            "grant": f"{base}/api/auth/grant/",
        },
        "users": [
            {"username": u["username"], "password": u["password"], "name": u["name"], "email": u["email"]}
            for u in users if u["username"] != "admin"
        ],
        "admin": {"username": "admin", "password": users[1]["password"], "api": f"{base}/api/"},
        "access_token_seconds": access_token_seconds,
        "state_dir": state_dir,
        "log": log_path,
    }
    published = supervised_server.Published(state_dir, info, args)
    print(f"{stamp()} glewlwyd-server.py: serving {issuer} (supervisor {os.getpid()}, glewlwyd {glewlwyd.pid}, "
          f"watching {published.watch_pid or 'nothing'}, lifetime {args.lifetime} s, "
          f"started in {published.ready - started:.2f} s)",
          file=sys.stderr)

    reason = None
    while reason is None:
        time.sleep(0.25)
        if stop["signal"] is not None:
            reason = f"signal {stop['signal']}"
        elif glewlwyd.poll() is not None:
            reason = f"glewlwyd exited with status {glewlwyd.returncode}"
        else:
            reason = published.end_reason()
    print(f"{stamp()} glewlwyd-server.py: stopping: {reason}", file=sys.stderr)
    supervised_server.end(glewlwyd, 5)
    published.withdraw()
    return 0


def main():
    return SERVER.main(__doc__.split("\n\n")[0], DEFAULT_LIFETIME, cmd_start, serve)


if __name__ == "__main__":
    sys.exit(main())
