#!/usr/bin/python3
"""A Mercurial repository served over HTTP on 127.0.0.1 that requires authentication, for
tokenctl's Mercurial tests (mercurial_keyring asking tokenctl's keyring backend): one
repository with one commit, every request checked at the authorization server.

    hg-http-server.py --state-dir DIR --introspect URL --introspect-client ID:SECRET
                   [--watch-pid PID] [--lifetime SECONDS]

It serves the repository at http://127.0.0.1:PORT/repo through Mercurial's own hgweb
(WSGI), behind a check of every request: it must carry HTTP Basic (any username; the
token as the password, as Mercurial sends what keyring gave it) with a token the
authorization server's RFC 7662 introspection says is active, checked on every request
and never cached; anything else gets 401 with `WWW-Authenticate: Basic realm="hg"`,
which is when Mercurial asks for a password. The repository's one file, `hello.txt`,
holds "hello from the tokenctl test repository".

It publishes its address in DIR/registry.json, stops and logs as loopback_service.py says; its
lines in DIR/requests.log hold the method, path, the kind of credential ("none", "basic" or "other"), the username, whether
the token was active, the token's
digest (never the token) and the status.

The interpreter is Debian's python3 by path: Mercurial is a module of the system's Python.
"""

import os
import subprocess
import sys
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import loopback_service  # noqa: E402

CONTENT = b"hello from the tokenctl test repository\n"


def make_repository(path):
    """`hg init` and one commit, with no configuration but the command line's."""
    environment = dict(os.environ, HGRCPATH="", HGPLAIN="1", HGUSER="tokenctl tests <tests@example.invalid>")
    subprocess.run(["hg", "init", path], check=True, env=environment, stdout=subprocess.DEVNULL)
    with open(os.path.join(path, "hello.txt"), "wb") as handle:
        handle.write(CONTENT)
    subprocess.run(["hg", "--cwd", path, "commit", "--addremove", "--message", "hello"], check=True,
                   env=environment, stdout=subprocess.DEVNULL)


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


class Checked:
    """The WSGI application: the token check in front of hgweb."""

    def __init__(self, args, repository):
        from mercurial.hgweb import hgweb
        self.args = args
        self.hgweb = hgweb(repository.encode(), b"repo")

    def log(self, line, status):
        loopback_service.record(self.args.state_dir, line, status)

    def __call__(self, environ, start_response):
        kind, user, token = loopback_service.credential(environ.get("HTTP_AUTHORIZATION", ""), accept=("basic",))
        active, _ = loopback_service.is_active(self.args, token)
        path = environ.get("PATH_INFO", "")
        if environ.get("QUERY_STRING"):
            path += "?" + environ["QUERY_STRING"]
        line = {"method": environ.get("REQUEST_METHOD"), "path": path, "credential": kind, "username": user,
                "active": active, "token_sha256": loopback_service.token_digest(token)}
        if not active:
            self.log(line, 401)
            body = b"authentication required\n"
            start_response("401 Unauthorized", [("Content-Type", "text/plain"), ("Content-Length", str(len(body))),
                                                ("WWW-Authenticate", 'Basic realm="hg"')])
            return [body]
        if not (path == "/repo" or path.startswith("/repo/") or path.startswith("/repo?")):
            self.log(line, 404)
            body = b"not found\n"
            start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
            return [body]
        statuses = []

        def noted(status, headers, *rest):
            statuses.append(int(status.split(" ", 1)[0]))
            return start_response(status, headers, *rest)

        # hgweb serves the repository at its root: what follows /repo is its path.
        environ = dict(environ, SCRIPT_NAME="/repo", PATH_INFO=environ.get("PATH_INFO", "")[len("/repo"):])
        body = b"".join(self.hgweb(environ, noted))
        self.log(line, statuses[0] if statuses else 500)
        return [body]


def main():
    args = loopback_service.arguments()
    repository = os.path.join(args.state_dir, "repo")
    make_repository(repository)
    # One request at a time: hg asks one after another, and hgweb's repository cache is
    # then never shared between threads.
    server = WSGIServer(("127.0.0.1", 0), QuietHandler)
    server.set_app(Checked(args, repository))
    loopback_service.serve(server, os.path.join(args.state_dir, "registry.json"), args.watch_pid, args.lifetime)


if __name__ == "__main__":
    sys.exit(main())
