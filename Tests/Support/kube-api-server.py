#!/usr/bin/env python3
"""A Kubernetes API server stand-in on 127.0.0.1 for tokenctl's exec credential plugin
tests: enough for `kubectl get namespaces`, every request checked at the authorization
server. HTTPS, with a self-signed certificate for 127.0.0.1 made with openssl at start
(DIR/cert.pem, published as "certificate"): kubectl runs exec plugins only for a server
it reaches over TLS.

    kube-api-server.py --state-dir DIR --introspect URL --introspect-client ID:SECRET
                    [--watch-pid PID] [--lifetime SECONDS]

Every request must carry `Authorization: Bearer TOKEN` with a token the authorization
server's RFC 7662 introspection says is active, checked on every request and never
cached; anything else gets 401 with a Kubernetes Status, as an API server answers.

It publishes its address in DIR/registry.json, stops and logs as loopback_service.py says; its
lines in DIR/requests.log hold the method, path, the kind of credential ("none", "bearer" or "other"), whether it was active, the token's
digest (never the token) and the status.
"""

import json
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import loopback_service  # noqa: E402

NAMESPACES = {"kind": "NamespaceList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
              "items": [{"metadata": {"name": "default", "uid": "0", "creationTimestamp": "2026-01-01T00:00:00Z"},
                         "status": {"phase": "Active"}}]}
CORE = {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
    {"name": "namespaces", "singularName": "namespace", "namespaced": False, "kind": "Namespace",
     "verbs": ["get", "list"], "shortNames": ["ns"]}]}


class Handler(loopback_service.Handler):
    server_version = "kube-api-server"

    def reply(self, status, document, line):
        self.send(status, json.dumps(document).encode(), [("Content-Type", "application/json")], line)

    def do_GET(self):
        kind, _, token = loopback_service.credential(self.headers.get("Authorization", ""), accept=("bearer",))
        active, _ = loopback_service.is_active(self.server.args, token)
        path = urllib.parse.urlsplit(self.path).path
        line = {"method": "GET", "path": path, "credential": kind, "active": active,
                "token_sha256": loopback_service.token_digest(token)}
        if not active:
            return self.reply(401, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                    "message": "Unauthorized", "reason": "Unauthorized", "code": 401}, line)
        documents = {
            "/api": {"kind": "APIVersions", "versions": ["v1"],
                     "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
            "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
            "/api/v1": CORE,
            "/api/v1/namespaces": NAMESPACES,
            "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0"},
        }
        if path in documents:
            return self.reply(200, documents[path], line)
        return self.reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                                "code": 404}, line)


def main():
    loopback_service.run(Handler, loopback_service.arguments(), "registry.json", tls=True)


if __name__ == "__main__":
    sys.exit(main())
