#!/usr/bin/env python3
"""A sparse cargo registry on 127.0.0.1 that requires authentication (RFC 3139,
`auth-required`), for tokenctl's cargo credential provider tests: one crate, every
request checked at the authorization server.

    cargo-registry-server.py --state-dir DIR --introspect URL --introspect-client ID:SECRET
                          [--watch-pid PID] [--lifetime SECONDS]

It serves the index at http://127.0.0.1:PORT/index/ (config.json with "auth-required":
true, and the crate `hello` 0.1.0) and the crate's download. Every request, config.json
included, must carry `Authorization: Bearer TOKEN` with a token the authorization
server's RFC 7662 introspection says is active, checked on every request and never
cached; anything else gets 401, which is how cargo learns that it needs its credential
provider.

It publishes its address in DIR/registry.json, stops and logs as loopback_service.py says; its
lines in DIR/requests.log hold the method, path, the kind of credential ("none", "bearer" or "other"), whether it was active, the token's
digest (never the token) and the status.
"""

import gzip
import hashlib
import io
import json
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import loopback_service  # noqa: E402


def crate():
    """The .crate file (a gzipped tar) of hello 0.1.0."""
    files = {
        "hello-0.1.0/Cargo.toml": b'[package]\nname = "hello"\nversion = "0.1.0"\nedition = "2021"\n',
        "hello-0.1.0/src/lib.rs": b'pub fn hello() -> &\'static str { "hello from the tokenctl test registry" }\n',
    }
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(content), 0, 0o644
            archive.addfile(info, io.BytesIO(content))
    return gzip.compress(tar_bytes.getvalue(), mtime=0)


class Handler(loopback_service.Handler):
    server_version = "cargo-registry-server"

    def reply(self, status, body, line, content_type="application/json"):
        self.send(status, body, [("Content-Type", content_type)], line)

    def do_GET(self):
        kind, _, token = loopback_service.credential(self.headers.get("Authorization", ""), accept=("bearer",))
        active, _ = loopback_service.is_active(self.server.args, token)
        line = {"method": "GET", "path": self.path, "credential": kind, "active": active,
                "token_sha256": loopback_service.token_digest(token)}
        if not active:
            return self.reply(401, b'{"errors":[{"detail":"authentication required"}]}', line)
        base = self.server.base_url
        package = self.server.crate
        if self.path == "/index/config.json":
            body = json.dumps({"dl": base + "/api/v1/crates", "api": base, "auth-required": True}).encode()
            return self.reply(200, body, line)
        if self.path == "/index/he/ll/hello":
            entry = {"name": "hello", "vers": "0.1.0", "deps": [], "features": {}, "yanked": False,
                     "cksum": hashlib.sha256(package).hexdigest()}
            return self.reply(200, json.dumps(entry).encode() + b"\n", line, "text/plain")
        if self.path == "/api/v1/crates/hello/0.1.0/download":
            return self.reply(200, package, line, "application/octet-stream")
        return self.reply(404, b'{"errors":[{"detail":"not found"}]}', line)


def main():
    loopback_service.run(Handler, loopback_service.arguments(), "registry.json", crate=crate())


if __name__ == "__main__":
    sys.exit(main())
