#!/usr/bin/env python3
"""A fake Microsoft Graph (v1.0 users and me) and token endpoint for tokenctl's tests.

Python 3 standard library only. It binds 127.0.0.1 on a free port, writes
DIR/fake-graph.json atomically: {"base_url": "http://127.0.0.1:PORT", "port": PORT,
"pid": PID}, and serves until the watched process (default: its parent) is gone,
--lifetime seconds have passed (default 300), or SIGTERM/SIGINT arrives.

Usage
    fake-graph.py --state-dir DIR [--watch-pid PID] [--lifetime SECONDS]
               [--access-token T]... [--refresh-token R] [--page-size N]
               [--throttle N] [--foreign-next-link URL]
               [--introspect URL --introspect-client ID:SECRET]

Endpoints (BASE is base_url)
  POST BASE/token        grant_type=refresh_token with refresh_token=R (--refresh-token)
                         -> 200 {"access_token": "fresh-N", ...}, and fresh-N becomes
                         valid; anything else -> 400 invalid_grant.
  GET  BASE/v1.0/users?$filter=startswith(FIELD,'LITERAL')&$top=N
                         the directory's users whose FIELD starts with LITERAL (OData
                         literal: '' is a quote; case-insensitive), at most
                         min(N, --page-size) per page, with @odata.nextLink
                         (BASE/v1.0/users?...&$skiptoken=K) while more remain. With
                         --foreign-next-link, the first page links there instead.
  GET  BASE/v1.0/users/ID-OR-UPN   one user, or 404 Request_ResourceNotFound.
  GET  BASE/v1.0/me                the user "ada".
  POST BASE/v1.0/me/revokeSignInSessions   200 {"value": true}
Graph endpoints need "Authorization: Bearer T" with T valid (--access-token, or issued
by /token); else 401 InvalidAuthenticationToken. The first --throttle Graph requests
answer 429 with Retry-After: 2 instead.

With --introspect, a bearer token it did not issue is also valid when the authorization
server's RFC 7662 introspection endpoint (URL) answers "active": true for it, asked with
HTTP Basic client authentication (--introspect-client), as a real resource server that
did not issue its tokens does. The answer is cached per token for the life of the
process (an active one until its "exp"); an endpoint that cannot be reached or refuses
the client is not cached, and the request gets 401.

Each request is one JSON line in DIR/requests.log: method, path, decoded query, status.
Each introspection call is one line too: {"method": "POST", "path": "(introspect)",
"query": {}, "status": the endpoint's status (0: unreachable), "active": true/false}.
No header and no body is logged, so no token and no client secret reaches the log.
"""

import argparse
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import loopback_service  # noqa: E402

def user(uid, name, given, surname, upn, mail, phones=(), mobile=None, job=None, office=None):
    return {"id": uid, "displayName": name, "givenName": given, "surname": surname, "userPrincipalName": upn,
            "mail": mail, "businessPhones": list(phones), "mobilePhone": mobile, "jobTitle": job,
            "officeLocation": office}


USERS = [
    user("u-ada", "Ada Lovelace", "Ada", "Lovelace", "ada@contoso.test", "ada@contoso.test", ["+1 555 0100"],
         mobile="+1 555 0199", job="Analyst", office="London"),
    user("u-adam", "Adam Smith", "Adam", "Smith", "adam@contoso.test", "adam@contoso.test"),
    user("u-adele", "Adele Vance", "Adele", "Vance", "adele@contoso.test", None, ["+1 555 0101", "+1 555 0102"]),
    user("u-adrian", "Adrian Ford", "Adrian", "Ford", "adrian@contoso.test", "adrian@contoso.test"),
    user("u-adelaide", "Adelaide Byron", "Adelaide", "Byron", "adelaide@contoso.test", "adelaide@contoso.test"),
    user("u-conan", "Conan O'Brien", "Conan", "O'Brien", "conan@contoso.test", "conan@contoso.test"),
    user("u-zoe", "Zoë Åberg", "Zoë", "Åberg", "zoe@contoso.test", "zoe@contoso.test"),
    user("u-tom", "Tom & Jerry", "Tom", "& Jerry", "tom@contoso.test", "tom@contoso.test"),
    user("u-evil", "Mallory \u001b[31mRed", "Mallory", "Red", "mallory@contoso.test", "mallory@contoso.test"),
]
FIELDS = {"givenName", "displayName", "surname", "mail", "userPrincipalName"}
FILTER = re.compile(r"^startswith\((\w+),'((?:[^']|'')*)'\)$")


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.valid = set(args.access_token)
        self.issued = 0
        self.throttle_left = args.throttle
        self.base_url = ""
        # token -> (active, exp or None): introspection answers, kept for the process.
        self.introspected = {}


def graph_error(code, message):
    return {"error": {"code": code, "message": message}}


def log_line(state, line):
    with state.lock:
        with open(os.path.join(state.args.state_dir, "requests.log"), "a") as log:
            log.write(json.dumps(line) + "\n")


def introspect(state, token):
    """Whether the authorization server says `token` is active (RFC 7662 §2)."""
    with state.lock:
        cached = state.introspected.get(token)
    if cached is None:
        status, answer = loopback_service.introspect(state.args.introspect, state.args.introspect_client, token)
        if answer is None:
            # Not an answer about the token (unreachable, or our client refused): say so
            # in the log, and ask again next time rather than remember a failure.
            log_line(state, {"method": "POST", "path": "(introspect)", "query": {}, "status": status,
                             "active": False})
            return False
        exp = answer.get("exp")
        cached = (answer.get("active") is True, exp if isinstance(exp, (int, float)) else None)
        log_line(state, {"method": "POST", "path": "(introspect)", "query": {}, "status": status,
                         "active": cached[0]})
        with state.lock:
            state.introspected[token] = cached
    active, exp = cached
    return active and (exp is None or time.time() < exp)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-graph"

    def log_message(self, *args):
        pass

    def record(self, status, query):
        log_line(self.server.state, {"method": self.command, "path": urllib.parse.urlsplit(self.path).path,
                                     "query": query, "status": status})

    def answer(self, status, body, headers=(), query=None):
        data = json.dumps(body).encode()
        # Logged before answering: a test reads the log as soon as it has its answer.
        self.record(status, query or {})
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        self.handle_any()

    def do_GET(self):
        self.handle_any()

    def handle_any(self):
        state = self.server.state
        parts = urllib.parse.urlsplit(self.path)
        # keep_blank_values: an empty prefix is a value, and `%2B` must stay a plus.
        query = dict(urllib.parse.parse_qsl(parts.query.replace("+", "%20"), keep_blank_values=True))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        path = parts.path
        if path == "/token" and self.command == "POST":
            form = dict(urllib.parse.parse_qsl(body))
            if form.get("grant_type") == "refresh_token" and form.get("refresh_token") == state.args.refresh_token:
                with state.lock:
                    state.issued += 1
                    token = "fresh-%d" % state.issued
                    state.valid.add(token)
                return self.answer(200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600,
                                         "refresh_token": state.args.refresh_token})
            return self.answer(400, {"error": "invalid_grant"})
        if not path.startswith("/v1.0/"):
            return self.answer(404, graph_error("NotFound", "no such path"), query=query)
        with state.lock:
            throttled = state.throttle_left > 0
            if throttled:
                state.throttle_left -= 1
        if throttled:
            return self.answer(429, graph_error("TooManyRequests", "Too many requests"),
                               [("Retry-After", "2")], query)
        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
        with state.lock:
            authorized = token in state.valid
        if not authorized and token and state.args.introspect:
            authorized = introspect(state, token)
        if not authorized:
            return self.answer(401, graph_error("InvalidAuthenticationToken", "Access token has expired."),
                               [("WWW-Authenticate", 'Bearer error="invalid_token"')], query)
        route = path[len("/v1.0"):]
        if route == "/users" and self.command == "GET":
            return self.users(query)
        if route == "/me" and self.command == "GET":
            return self.answer(200, USERS[0], query=query)
        if route == "/me/revokeSignInSessions" and self.command == "POST":
            return self.answer(200, {"value": True}, query=query)
        if route.startswith("/users/") and self.command == "GET":
            wanted = urllib.parse.unquote(route[len("/users/"):]).lower()
            for user in USERS:
                if user["id"].lower() == wanted or user["userPrincipalName"].lower() == wanted:
                    return self.answer(200, user, query=query)
            return self.answer(404, graph_error("Request_ResourceNotFound",
                                                "Resource '%s' does not exist." % wanted), query=query)
        return self.answer(405 if route in ("/users", "/me") else 404,
                           graph_error("BadRequest", "unsupported"), query=query)

    def users(self, query):
        state = self.server.state
        match = FILTER.match(query.get("$filter", ""))
        if not match or match.group(1) not in FIELDS:
            return self.answer(400, graph_error("BadRequest", "Invalid filter clause"), query=query)
        field, prefix = match.group(1), match.group(2).replace("''", "'").lower()
        found = [u for u in USERS if (u.get(field) or "").lower().startswith(prefix)]
        top = int(query.get("$top", "100"))
        size = min(top, state.args.page_size)
        skip = int(query.get("$skiptoken", "0"))
        page = {"value": found[skip:skip + size]}
        if skip + size < len(found):
            if state.args.foreign_next_link and skip == 0:
                page["@odata.nextLink"] = state.args.foreign_next_link
            else:
                rest = dict(query)
                rest["$skiptoken"] = str(skip + size)
                page["@odata.nextLink"] = "%s/v1.0/users?%s" % (
                    state.base_url, urllib.parse.urlencode(rest, quote_via=urllib.parse.quote, safe="$"))
        return self.answer(200, page, query=query)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--watch-pid", type=int, default=os.getppid())
    parser.add_argument("--lifetime", type=float, default=300)
    parser.add_argument("--access-token", action="append", default=[])
    parser.add_argument("--refresh-token", default="refresh-1")
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--throttle", type=int, default=0)
    parser.add_argument("--foreign-next-link")
    parser.add_argument("--introspect", metavar="URL")
    parser.add_argument("--introspect-client", metavar="ID:SECRET")
    args = parser.parse_args()
    if bool(args.introspect) != bool(args.introspect_client) or (
            args.introspect_client and ":" not in args.introspect_client):
        # Never echo the value: it holds the client secret.
        parser.error("--introspect URL and --introspect-client ID:SECRET go together")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.state = State(args)
    port = server.server_address[1]
    server.state.base_url = "http://127.0.0.1:%d" % port
    loopback_service.serve(server, os.path.join(args.state_dir, "fake-graph.json"), args.watch_pid, args.lifetime)

if __name__ == "__main__":
    sys.exit(main())
