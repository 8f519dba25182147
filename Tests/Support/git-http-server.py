#!/usr/bin/env python3
"""A git smart-HTTP server on 127.0.0.1 for tokenctl's git helper tests: `git
http-backend` (git-http-backend(1)) behind a small HTTP server that lets a request
through only with an access token the authorization server says is active.

    git-http-server.py --state-dir DIR --root REPOS --introspect URL
                    --introspect-client ID:SECRET [--watch-pid PID] [--lifetime SECONDS]

Every repository under REPOS is served at http://127.0.0.1:PORT/NAME.git, for clone,
fetch and push. A request must carry the token as the password of HTTP Basic (any
username: that is how git sends what a credential helper gave it) or as
`Authorization: Bearer`. The token is checked with the authorization server's RFC 7662
introspection endpoint on every request, never cached, so a token revoked a moment ago
is refused at once. Without a token, or with one that is not active, the answer is 401
with `WWW-Authenticate: Basic realm="git"`, which makes git ask its credential helpers.

It publishes its address in DIR/git-server.json, stops and logs as loopback_service.py says; its
lines in DIR/requests.log hold the method, path, service, the kind of credential ("none", "basic", "bearer" or "other"),
whether it was active, the username introspection gave, the token's
digest (never the token) and the status.
"""

import os
import subprocess
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import loopback_service  # noqa: E402


class Handler(loopback_service.Handler):
    server_version = "git-http-server"

    def handle_git(self):
        args = self.server.args
        parts = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(parts.query))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        kind, _, token = loopback_service.credential(self.headers.get("Authorization", ""))
        active, answer = loopback_service.is_active(args, token)
        username = (answer or {}).get("username")
        line = {"method": self.command, "path": parts.path, "service": query.get("service"),
                "credential": kind, "active": active, "username": username,
                "token_sha256": loopback_service.token_digest(token)}
        if not active:
            return self.send(401, b"authentication required\n",
                             [("WWW-Authenticate", 'Basic realm="git"'), ("Content-Type", "text/plain")], line)
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": args.root, "GIT_HTTP_EXPORT_ALL": "1",
            # http-backend takes pushes only from an authenticated user.
            "REMOTE_USER": username or "git-user", "REMOTE_ADDR": "127.0.0.1",
            "REQUEST_METHOD": self.command, "PATH_INFO": parts.path, "QUERY_STRING": parts.query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HOME": args.state_dir, "GIT_CONFIG_NOSYSTEM": "1",
        }
        result = subprocess.run(["git", "http-backend"], input=body, env=environment, capture_output=True,
                                timeout=60)
        head, _, payload = result.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = result.stdout.partition(b"\n\n")
        status = 200
        headers = []
        for raw in head.decode("latin-1").splitlines():
            name, _, value = raw.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        if result.returncode != 0 and not head:
            status, payload, headers = 500, result.stderr, [("Content-Type", "text/plain")]
        self.send(status, payload, headers, line)

    do_GET = handle_git
    do_POST = handle_git


def root_option(parser):
    parser.add_argument("--root", required=True)


def main():
    loopback_service.run(Handler, loopback_service.arguments(more=root_option), "git-server.json")


if __name__ == "__main__":
    sys.exit(main())
