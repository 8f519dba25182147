#!/usr/bin/env python3
"""A container registry stand-in on 127.0.0.1 for tokenctl's Docker credential helper
tests: enough of the Docker Registry HTTP API V2 and its token authentication for
`skopeo inspect` and `skopeo copy` of one image, with every credential checked at the
authorization server.

    docker-registry-server.py --state-dir DIR --introspect URL --introspect-client ID:SECRET
                           [--repository NAME] [--tag TAG] [--watch-pid PID] [--lifetime SECONDS]

It serves the image NAME:TAG (default tools/hello:1) at http://127.0.0.1:PORT. A request
to /v2/ without an active bearer token gets 401 with `WWW-Authenticate: Bearer
realm="http://127.0.0.1:PORT/token",service="registry.test"`, which sends the client to
its credential helper and then to the realm with HTTP Basic (username, secret). The realm
hands out the secret itself as the registry's token, but only when the authorization
server's RFC 7662 introspection says it is active; every /v2/ request is checked the same
way, never cached, so the registry token is exactly the access token the helper gave.

It publishes its address in DIR/registry.json, stops and logs as loopback_service.py says; its
lines in DIR/requests.log hold the method, path, the kind of credential ("none", "basic", "bearer" or "other"), the Basic
username, whether it was active, the token's
digest (never the token) and the status.
"""

import gzip
import hashlib
import io
import json
import os
import re
import sys
import tarfile
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import loopback_service  # noqa: E402

MANIFEST_TYPE = "application/vnd.docker.distribution.manifest.v2+json"


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def image():
    """(manifest bytes, {digest: blob bytes}) of a one-layer image holding hello.txt."""
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        content = b"hello from the tokenctl test registry\n"
        info = tarfile.TarInfo("hello.txt")
        info.size, info.mtime, info.mode = len(content), 0, 0o644
        archive.addfile(info, io.BytesIO(content))
    layer_tar = tar_bytes.getvalue()
    layer = gzip.compress(layer_tar, mtime=0)
    config = json.dumps({
        "architecture": "amd64", "os": "linux", "created": "2026-01-01T00:00:00Z",
        "config": {"Cmd": ["/bin/true"]},
        "rootfs": {"type": "layers", "diff_ids": [digest(layer_tar)]},
    }, sort_keys=True).encode()
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": MANIFEST_TYPE,
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "size": len(config),
                   "digest": digest(config)},
        "layers": [{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip", "size": len(layer),
                    "digest": digest(layer)}],
    }, sort_keys=True).encode()
    return manifest, {digest(config): config, digest(layer): layer}


class Handler(loopback_service.Handler):
    server_version = "docker-registry-server"

    def handle_request(self):
        path = urllib.parse.urlsplit(self.path).path
        kind, user, token = loopback_service.credential(self.headers.get("Authorization", ""))
        active, _ = loopback_service.is_active(self.server.args, token)
        line = {"method": self.command, "path": path, "credential": kind, "username": user, "active": active,
                "token_sha256": loopback_service.token_digest(token)}
        json_type = [("Content-Type", "application/json")]
        if path == "/token":
            if kind != "basic" or not active:
                return self.send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}', json_type, line)
            body = json.dumps({"token": token, "access_token": token, "expires_in": 60}).encode()
            return self.send(200, body, json_type, line)
        if not path.startswith("/v2/"):
            return self.send(404, b"", (), line)
        if kind != "bearer" or not active:
            challenge = 'Bearer realm="%s/token",service="registry.test"' % self.server.base_url
            match = re.match(r"^/v2/(.+)/(manifests|blobs|tags)/", path)
            if match:
                challenge += ',scope="repository:%s:pull"' % match.group(1)
            return self.send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}',
                              json_type + [("WWW-Authenticate", challenge),
                                           ("Docker-Distribution-API-Version", "registry/2.0")], line)
        args = self.server.args
        repository = "/v2/%s/" % args.repository
        manifest, blobs = self.server.image
        if path == "/v2/":
            return self.send(200, b"{}", json_type + [("Docker-Distribution-API-Version", "registry/2.0")], line)
        if path == repository + "tags/list":
            body = json.dumps({"name": args.repository, "tags": [args.tag]}).encode()
            return self.send(200, body, json_type, line)
        if path in (repository + "manifests/" + args.tag, repository + "manifests/" + digest(manifest)):
            return self.send(200, manifest, [("Content-Type", MANIFEST_TYPE),
                                              ("Docker-Content-Digest", digest(manifest))], line)
        if path.startswith(repository + "blobs/") and path[len(repository + "blobs/"):] in blobs:
            blob = blobs[path[len(repository + "blobs/"):]]
            return self.send(200, blob, [("Content-Type", "application/octet-stream"),
                                          ("Docker-Content-Digest", digest(blob))], line)
        return self.send(404, b'{"errors":[{"code":"NAME_UNKNOWN"}]}', json_type, line)

    do_GET = handle_request
    do_HEAD = handle_request


def image_options(parser):
    parser.add_argument("--repository", default="tools/hello")
    parser.add_argument("--tag", default="1")


def main():
    loopback_service.run(Handler, loopback_service.arguments(more=image_options), "registry.json", image=image())


if __name__ == "__main__":
    sys.exit(main())
