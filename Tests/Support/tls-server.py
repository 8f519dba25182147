#!/usr/bin/env python3
"""An HTTPS server on 127.0.0.1 whose certificate nobody trusts: a fresh self-signed one
for "127.0.0.1", made with openssl at start. Every request gets a valid-looking token
response, so a client that skipped certificate verification would be caught succeeding.

    tls-server.py --state-dir DIR [--watch-pid PID] [--lifetime SECONDS]

Publishes {"base_url": "https://127.0.0.1:PORT", ...} in DIR/tls-server.json (see
loopback_service.py) and stops with the watched process.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import loopback_service  # noqa: E402


class Handler(loopback_service.Handler):
    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = json.dumps({"access_token": "untrusted-server-token", "token_type": "Bearer", "expires_in": 3600,
                           "refresh_token": "untrusted-server-refresh"}).encode()
        self.send(200, body, [("Content-Type", "application/json")])

    do_GET = answer
    do_POST = answer


def main():
    loopback_service.run(Handler, loopback_service.arguments(introspecting=False), "tls-server.json", tls=True)


if __name__ == "__main__":
    sys.exit(main())
