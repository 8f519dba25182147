#!/usr/bin/env python3
"""Kills `tokenctl token` and `git-credential-tokenctl get` with SIGKILL at random points
of a refresh, against the stub authorization server's rotating refresh tokens with reuse
detection, and checks after every kill that no token was lost.

    crash-harness.py TOKENCTL GIT_HELPER [--kills N] [--seed S] [--answer-delay SECONDS]

Run inside a throw-away keyring (Tests/Support/with-private-keyring.sh). Each round:
  1. starts one of the two commands, asking for a token valid longer than the stub's
     access tokens live (30 s), so that every run refreshes;
  2. sends SIGKILL after a random delay, uniform over 1.3 times a refresh's median
     length (measured first, without kills), so kills land before, during and after
     the token request; the stub holds each answer --answer-delay seconds after rotating
     (default 0.03), widening the window in which the server has acted but the client
     has not stored the answer;
  3. waits until the account's refresh lock is free (a refresh that outlives its
     caller finishes first), then checks the keyring's refresh token with the stub:
     "current", or "used" (one refresh away, which strict reuse detection would punish
     on the next use), else lost;
  4. runs `tokenctl token --min-valid 60`, which must refresh and succeed, and checks the
     account is not marked needs-sign-in.

A lost grant is counted and the account re-seeded, so that one loss does not hide the
rest. Prints one summary line per figure as "crash<TAB>NAME<TAB>VALUE", and appends
them to $HARDENING_SUMMARY when set. Exits 1 when a token was lost or an account needs a
new sign-in.
"""

import argparse
import fcntl
import hashlib
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TYPE, ACCOUNT_ID, NAME, CLIENT = "crashlocal", "stub-user", "crash", "crash-client"


class Harness:
    def __init__(self, args):
        self.args = args
        self.home = tempfile.mkdtemp(prefix="tokenctl-crash-")
        self.group = "crash-%d" % os.getpid()
        state = os.path.join(self.home, "stub")
        os.makedirs(state)
        self.stub = subprocess.Popen(
            [os.path.join(ROOT, "Tests/Support/stub-oauth-server.py"), "--state-dir", state,
             "--watch-pid", str(os.getpid()), "--access-token-seconds", "30",
             "--answer-delay", str(args.answer_delay), "--lifetime", "3600"])
        info = os.path.join(state, "stub.json")
        for _ in range(200):
            if os.path.exists(info):
                break
            time.sleep(0.05)
        with open(info) as handle:
            self.base = json.load(handle)["base_url"]
        self.host = self.base[len("http://"):]
        types = os.path.join(self.home, "config/tokenctl/types")
        os.makedirs(types)
        with open(os.path.join(types, TYPE + ".toml"), "w") as handle:
            handle.write('id = "%s"\ndisplay_name = "Crash test"\nissuer = "%s"\nclient_id = "%s"\n\n'
                         '[git]\nhosts = ["%s"]\nusername = "oauth2"\n' % (TYPE, self.base, CLIENT, self.host))
        self.environment = dict(os.environ, TOKENCTL_GROUP=self.group, HOME=self.home,
                                XDG_CONFIG_HOME=os.path.join(self.home, "config"),
                                XDG_CACHE_HOME=os.path.join(self.home, "cache"))
        self.environment.pop("XDG_RUNTIME_DIR", None)
        self.environment.pop("TOKENCTL_ACCOUNT", None)
        digest = hashlib.sha256(("%s\0%s\0%s" % (self.group, TYPE, ACCOUNT_ID)).encode()).digest()
        self.lock_path = os.path.join(self.home, "cache/tokenctl/run/locks",
                                      "".join("%02x" % b for b in digest[:16]) + ".lock")

    # The stub and the keyring.

    def admin(self, path, method="GET"):
        request = urllib.request.Request(self.base + path, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    def attributes(self):
        return ["xdg:schema", "org.tokenctl.Account", "type", TYPE, "account", ACCOUNT_ID, "group", self.group]

    def stored(self):
        result = subprocess.run(["secret-tool", "lookup"] + self.attributes(), capture_output=True,
                                env=self.environment)
        return json.loads(result.stdout) if result.returncode == 0 and result.stdout else None

    def needs_sign_in(self):
        result = subprocess.run([self.args.tokenctl, "list", "--json"], capture_output=True, env=self.environment)
        accounts = json.loads(result.stdout or b"{}").get("accounts", [])
        return any(account.get("needs_sign_in") for account in accounts)

    def seed(self):
        """A fresh grant, stored with an expired access token."""
        subprocess.run(["secret-tool", "clear"] + self.attributes(), env=self.environment)
        family = self.admin("/_admin/issue", "POST")
        now = int(time.time())
        secret = json.dumps({"version": 1, "access_token": family["access_token"],
                             "refresh_token": family["refresh_token"], "token_type": "Bearer",
                             "expires_at": now - 60})
        subprocess.run(
            ["secret-tool", "store", "--label", "tokenctl: %s — %s [%s]" % (TYPE, NAME, self.group)]
            + self.attributes() + ["name", NAME, "scopes", "", "created", str(now), "updated", str(now),
                                   "expires", str(now - 60), "refreshable", "true", "issuer", self.base,
                                   "client-id", CLIENT, "state", "ok"],
            input=secret.encode(), env=self.environment, check=True)

    # The commands.

    def command(self, which):
        if which == "token":
            return [self.args.tokenctl, "token", "--min-valid", "60", "%s:%s" % (TYPE, NAME)], b""
        return [self.args.git_helper, "get"], ("protocol=http\nhost=%s\n\n" % self.host).encode()

    def start(self, which):
        argv, stdin = self.command(which)
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, env=self.environment)
        process.stdin.write(stdin)
        process.stdin.close()
        return process

    def wait_for_lock(self):
        """Returns once no refresh of the account is under way."""
        os.makedirs(os.path.dirname(self.lock_path), mode=0o700, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def run(self):
        self.seed()
        durations = []
        for index in range(10):
            which = "token" if index % 2 == 0 else "git"
            start = time.monotonic()
            process = self.start(which)
            if process.wait(timeout=60) != 0:
                raise SystemExit("crash-harness.py: %s failed without a kill; is the build broken?" % which)
            durations.append(time.monotonic() - start)
        median = statistics.median(durations)
        rng = random.Random(self.args.seed)
        figures = {"kills": 0, "kills_after_request": 0, "finished_before_kill": 0, "tokens_lost": 0,
                   "needs_sign_in": 0, "one_refresh_away": 0, "verified": 0}
        rounds = 0
        while figures["kills"] < self.args.kills and rounds < self.args.kills * 3:
            rounds += 1
            which = rng.choice(["token", "git"])
            before = self.admin("/_admin/stats")["token_requests"]
            process = self.start(which)
            time.sleep(rng.uniform(0, 1.3 * median))
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait()
                figures["kills"] += 1
                if self.admin("/_admin/stats")["token_requests"] > before:
                    figures["kills_after_request"] += 1
            else:
                figures["finished_before_kill"] += 1
            self.wait_for_lock()
            stored = self.stored()
            status = self.admin("/_admin/check?refresh_token=%s" % stored["refresh_token"])["status"] \
                if stored and stored.get("refresh_token") else "unknown"
            verify = subprocess.run(self.command("token")[0], capture_output=True, env=self.environment)
            lost = status not in ("current", "used") or verify.returncode != 0
            if status == "used":
                figures["one_refresh_away"] += 1
            if self.needs_sign_in():
                figures["needs_sign_in"] += 1
                lost = True
            if lost:
                figures["tokens_lost"] += 1
                sys.stderr.write("crash-harness.py: round %d (%s): refresh token %s, next command exit %d: %s\n" % (
                    rounds, which, status, verify.returncode, verify.stderr.decode(errors="replace").strip()))
                self.seed()
            else:
                figures["verified"] += 1
        figures["refresh_median_ms"] = round(median * 1000, 1)
        figures["reuse_detected"] = self.admin("/_admin/stats")["reuse_detected"]
        return figures

    def close(self):
        self.stub.terminate()
        subprocess.run(["secret-tool", "clear"] + self.attributes(), env=self.environment)
        shutil.rmtree(self.home, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tokenctl")
    parser.add_argument("git_helper")
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--answer-delay", type=float, default=0.03)
    args = parser.parse_args()
    harness = Harness(args)
    try:
        figures = harness.run()
    finally:
        harness.close()
    lines = ["crash\t%s\t%s" % (name, value) for name, value in figures.items()] + ["crash\tseed\t%d" % args.seed]
    print("\n".join(lines))
    if os.environ.get("HARDENING_SUMMARY"):
        with open(os.environ["HARDENING_SUMMARY"], "a") as handle:
            handle.write("\n".join(lines) + "\n")
    return 1 if figures["tokens_lost"] or figures["needs_sign_in"] else 0


if __name__ == "__main__":
    sys.exit(main())
