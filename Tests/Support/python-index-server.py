#!/usr/bin/env python3
"""A Python package index (PEP 503, the "simple" API) on 127.0.0.1 that requires
authentication, for tokenctl's keyring backend tests: one package, every request checked
at the authorization server.

    python-index-server.py --state-dir DIR --introspect URL --introspect-client ID:SECRET
                        [--watch-pid PID] [--lifetime SECONDS]

It serves http://127.0.0.1:PORT/simple/ with the project `hello-tokenctl` 0.1.0, one
wheel. Every request must carry HTTP Basic (any username; the token as the password, as
pip sends what keyring gave it) with a token the authorization server's RFC 7662
introspection says is active, checked on every request and never cached; anything else
gets 401 with `WWW-Authenticate: Basic realm="index"`, which sends pip to keyring.

It publishes its address in DIR/registry.json, stops and logs as loopback_service.py says; its
lines in DIR/requests.log hold the method, path, the kind of credential ("none", "basic" or "other"), the username, whether
the token was active, the token's
digest (never the token) and the status.
"""

import base64
import hashlib
import io
import os
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import loopback_service  # noqa: E402

WHEEL = "hello_tokenctl-0.1.0-py3-none-any.whl"


def wheel():
    """The wheel's bytes: a module and the metadata pip needs (PEP 427)."""
    files = {
        "hello_tokenctl/__init__.py": b'GREETING = "hello from the tokenctl test index"\n',
        "hello_tokenctl-0.1.0.dist-info/METADATA":
            b"Metadata-Version: 2.1\nName: hello-tokenctl\nVersion: 0.1.0\n",
        "hello_tokenctl-0.1.0.dist-info/WHEEL":
            b"Wheel-Version: 1.0\nGenerator: python-index-server\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = ""
    for name, content in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
        record += "%s,sha256=%s,%d\n" % (name, digest, len(content))
    record += "hello_tokenctl-0.1.0.dist-info/RECORD,,\n"
    files["hello_tokenctl-0.1.0.dist-info/RECORD"] = record.encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), content)
    return buffer.getvalue()


class Handler(loopback_service.Handler):
    server_version = "python-index-server"

    def reply(self, status, body, line, content_type="text/html", headers=()):
        self.send(status, body, [("Content-Type", content_type)] + list(headers), line)

    def do_GET(self):
        kind, user, token = loopback_service.credential(self.headers.get("Authorization", ""), accept=("basic",))
        active, _ = loopback_service.is_active(self.server.args, token)
        line = {"method": self.command, "path": self.path, "credential": kind, "username": user, "active": active,
                "token_sha256": loopback_service.token_digest(token)}
        if not active:
            return self.reply(401, b"authentication required\n", line, "text/plain",
                              [("WWW-Authenticate", 'Basic realm="index"')])
        package = self.server.wheel
        if self.path in ("/simple/", "/simple"):
            return self.reply(200, b'<html><body><a href="hello-tokenctl/">hello-tokenctl</a></body></html>', line)
        if self.path == "/simple/hello-tokenctl/":
            link = "/files/%s#sha256=%s" % (WHEEL, hashlib.sha256(package).hexdigest())
            body = '<html><body><a href="%s">%s</a></body></html>' % (link, WHEEL)
            return self.reply(200, body.encode(), line)
        if self.path == "/files/" + WHEEL:
            return self.reply(200, package, line, "application/octet-stream")
        return self.reply(404, b"not found\n", line, "text/plain")

    # uv asks with HEAD whether a wheel's server takes range requests; this one does not.
    do_HEAD = do_GET


def main():
    loopback_service.run(Handler, loopback_service.arguments(), "registry.json", wheel=wheel())


if __name__ == "__main__":
    sys.exit(main())
