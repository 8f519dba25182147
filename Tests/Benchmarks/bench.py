#!/usr/bin/env python3
"""tokenctl's benchmarks: `make bench` runs this inside a throw-away keyring.

    Tests/Support/with-private-keyring.sh python3 Tests/Benchmarks/bench.py \
        --bin .build/release [--runs 30] [--quick] [--only 1,2,...] [--json FILE] \
        [--before-bin DIR] [--before-front-end-bin DIR]

Every ratio divides two medians measured in the same run: ours and its baseline are
timed by one hyperfine invocation, on the same keyring items, so machine load hits both.
What each row measures (the issue's numbering):

1. `tokenctl token ACCOUNT` with a valid token stored vs `secret-tool lookup` of that item
   (≤ 0.5).
2. `git credential fill` through git-credential-tokenctl vs through git's contrib libsecret
   helper (built here from /usr/share/doc/git/contrib/credential/libsecret), same host,
   same keyring; and the two helpers' `get` alone, without git (2b, ≤ 0.5).
3. An expired token: `tokenctl token` vs a shell doing what it must do at least: one
   `secret-tool lookup`, one refresh POST with `curl`, one `secret-tool store`. Both
   refresh at the stub authorization server; before every run, of either, a fresh refresh
   token family is issued and stored with an expiry in the past.
4. 32 `tokenctl token` processes started at once on one expired token: token-endpoint
   requests (the stub counts them), failures, and the wall time against one refresh
   (row 3's median). Also the wall time of 32 concurrent `secret-tool lookup`s: what
   starting 32 keyring clients costs on this machine, whatever they do.
5. `tokenctl list` over 1,000 stored accounts vs `secret-tool search --all` of the same.
6. Peak RSS (GNU time's %M) of `tokenctl token` and of the git helper's `get`, with the
   baselines' beside them (≤ 8 MiB).
7. A storage miss: git-credential-oauth's browser flow (its only way to get a token) vs
   `tokenctl login`, both through the scripted browser against the real test
   authorization server (django-oauth-toolkit).

Rows 1-7 measure the direct path: they run with TOKENCTL_AGENT=0. The rows through the
agent run against a `tokenctl agent` this script starts in the background,
with TOKENCTL_AGENT_SOCKET in its scratch folder, and stops with SIGTERM (it must exit
0 and remove its socket within 10 s, or the script fails). Each checks, with
`tokenctl agent status --json`, that the agent served at least as many requests as the
row ran clients: a client that fell back to the direct path would measure the wrong thing.

1a. `tokenctl token` through the agent vs `secret-tool lookup` (row 1's items).
2a. `git credential fill`, and the helper's `get` alone, through the agent vs git's
    contrib libsecret helper (row 2's).
4a. Row 4 through the agent: 32 `tokenctl token` at once on an expired token; exactly
    one token request per round, wall time against row 3's one refresh.
6a. Peak RSS of `git-credential-tokenctl get` (and, to report, `tokenctl token`)
    through the agent.
8. Refresh ahead: a second stub issues 10-second access tokens and, as
   django-oauth-toolkit does, revokes the earlier ones when it rotates a refresh token;
   after one `tokenctl token` the agent holds the account, then 200 more are spread over
   60 s. None may wait for a refresh (the slowest within 3x the median), and every token
   printed must be active at the stub when asked right after (RFC 7662 introspection):
   none is handed out that the agent's refresh ahead is about to kill.
9. A new agent made to hold row 5's accounts (`tokenctl list`, then `tokenctl token`
   for each, through it): its peak RSS (VmHWM), and its CPU time (utime + stime, its
   reaped children's included, from /proc/PID/stat) over 60 idle seconds; its RSS, idle,
   against gnome-keyring-daemon's of row 20 (goal ≤ 1.5), and that daemon's now, holding
   row 5's items too.
10. The direct path stays as it was: `tokenctl token` with no agent running (it asks,
    finds none, falls back) vs TOKENCTL_AGENT=0, one hyperfine run, both through
    env(1); with --before-bin DIR (release binaries built before the agent), rows 1, 2
    and 2b also time those in the same hyperfine runs, and row 10 compares them.
11. The D-Bus API: `GetAccessToken` of row 1's account through `gdbus call`
    (a process per call) and through one persistent connection of a Python program on
    dbus-python (Tests/Support/dbus-client.py, 300 calls: median and p99), both allowed
    with `tokenctl allow`, vs `secret-tool lookup` in the same run. Goal: the persistent
    connection's median ≤ 0.1× the lookup's.
12. The peers: `tokenctl token` through the agent vs `oidc-token` through
    oidc-agent (Debian's oidc-agent-cli, set up with oidc-gen's flags against the stub
    with a refresh token it issued), goal ≤ 1.0, and the full program through the agent
    beside them (what the front end saves); `git credential fill` through the agent vs
    through a C helper that prints a fixed password, goal ≤ its time + 2 ms.
13. Row 9's agent and accounts with refreshes flowing: for 60 s another
    process rewrites one account's item every 2 s (1,000 one-hour tokens refresh one every
    3.6 s) while a client asks for a random account every 0.1 s: the p99 of those answers
    (goal ≤ 20 ms, each a process start included) and the agent's RSS before and after
    (goal: flat, ≤ +10%).
14. `tokenctl --version` and `--help` as installed (the front end, which answers
    `--version` itself and runs the full program for `--help`) vs the full program alone,
    goal ≤ 1.0 (no slower than before the front end). With
    --before-front-end-bin DIR (release binaries of the last commit before the front end,
    59b57f6), the goal is against those, timed in the same run, which is what "no slower
    than before" means; the full program alone of this build is then reported beside it.
15. Docker's helper `get` through the agent vs `git credential fill` through it, same host
    (every helper's `get` no slower than git's fill), goal ≤ 1.0.
16. Row 15 for cargo's credential provider: `tokenctl --cargo-plugin` answering one `get`
    request on standard input, as cargo runs it, goal ≤ 1.0.
17. Row 15 for kubectl's exec credential: `tokenctl kube-credential` with the cluster in
    KUBERNETES_EXEC_INFO, as kubectl runs it (provideClusterInfo), goal ≤ 1.0.
18. Another program writing the keyring beside row 9's agent (an import of items of a
    schema of its own, one `secret-tool store` at a time): the agent's CPU time per write
    (goal ≤ 2 ms), its most threads and its slowest `agent status` meanwhile (goal ≤ 1 s),
    and the import's time against the same import with no agent running (goal ≤ 1.05).
19. `tokenctl token` on a host the agent is forwarded to (`tokenctl ssh` to the forwarding
    tests' own sshd on 127.0.0.1 and second user, Tests/Support/forwarding-sshd.sh, timed
    there) vs the same through the local agent plus the ssh round trip: a socat echo
    through an `ssh -R` forwarding of the same session, less the same echo here. Goal ≤ 1.0
    (no more than local plus the round trip). Needs root; skipped otherwise.
20. A new agent asked once for each of 10 accounts (a keyring as most sessions have, before
    row 5 stores its 1,000), idle: its RSS against gnome-keyring-daemon's at the same
    moment, the resident process every desktop session has beside it (goal ≤ 1.0), with
    the agent's anonymous and file-backed parts (/proc/PID/smaps_rollup).
21. A refresh child as the agent runs it (`tokenctl-agent _refresh-worker`, handed the
    account's lock as the agent hands it) vs row 3's floor (lookup + curl POST + store),
    on row 3's expired account, goal ≤ 1.0 in time, and its peak RSS against the floor's
    largest program (wait4's ru_maxrss of each, the floor's three included), goal ≤ 1.0;
    the full program as the child beside them, for what the agent's own executable saves.
22. The peers' commands that start cold: `tokenctl --help` as installed (the front end
    prints it) vs `oidc-token --help`, and `tokenctl list` through the agent vs `oidc-add
    -l` (row 12's oidc-agent set-up), goal ≤ 1.0 each, with the full program alone beside
    them (what the front end saves).

Every row times what `make install` installs: `tokenctl` and `git-credential-tokenctl` are
the front end (links to .build/release/tokenctl-front-end), which runs the full program
for what it does not answer itself.

The table goes to standard output in Markdown, ready for docs/performance.md.
"""

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import platform
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "org.tokenctl.Account"
# The loopback account type of the benchmark, served by the stub authorization server.
TYPE = "benchlocal"
# Rows 3 and 4's account, of a type of its own on the same server without git hosts: were
# it a second account of TYPE, git's helper would find two accounts for the host and
# answer nothing (rows 2 and 6 would time that).
EXPIRED_TYPE = "benchexpired"
# The direct path's goals (no agent; it reads the keyring in a plain session with four
# D-Bus calls): half of the C tools' time, and the memory of a client the agent answers.
GOAL_DIRECT_RATIO = 0.5
GOAL_RSS_MIB = 8
# The agent's goals.
GOAL_AGENT_RATIO = 0.5
GOAL_AGENT_CLIENT_RSS_MIB = 8
GOAL_AGENT_RSS_MIB = 30
# The agent idle against gnome-keyring-daemon, the resident process every desktop session
# has beside it, holding a few accounts (row 20): no bigger with those, at most half again
# with 1,000 (row 9).
GOAL_AGENT_TO_KEYRING_RSS = 1.0
GOAL_AGENT_TO_KEYRING_RSS_1000 = 1.5
GOAL_SLOWEST_TO_MEDIAN = 3.0
# The second stub's access-token lifetime (row 8).
FRESH_TYPE = "benchfresh"
FRESH_LIFETIME = 10


def log(text):
    print(f"bench: {text}", file=sys.stderr, flush=True)


def run(argv, **kwargs):
    kwargs.setdefault("check", True)
    return subprocess.run(argv, **kwargs)


class AgentError(RuntimeError):
    """The agent did not start, did not stop as it must, or logged a token."""


class Agent:
    """`tokenctl agent` in the background, in the environment of the rows through it."""

    def __init__(self, bench, name):
        self.bench = bench
        self.name = name
        self.socket = bench.agent_socket
        self.log_path = bench.scratch / f"agent-{name}.log"
        with open(self.log_path, "wb") as log_file:
            self.process = subprocess.Popen([bench.tokenctl, "agent"], stdin=subprocess.DEVNULL, stdout=log_file,
                                            stderr=subprocess.STDOUT, env=bench.agent_env)
        self.pid = self.process.pid
        deadline = time.monotonic() + 15
        while (status := self.status()) is None:
            if self.process.poll() is not None:
                raise AgentError(f"the agent exited with status {self.process.returncode} at start: {self.log_tail()}")
            if time.monotonic() > deadline:
                self.process.kill()
                self.process.wait()
                raise AgentError(f"the agent did not answer `status` within 15 s: {self.log_tail()}")
            time.sleep(0.05)
        if status.get("pid") != self.pid:
            raise AgentError(f"`tokenctl agent status` names pid {status.get('pid')}, not the agent started ({self.pid})")
        log(f"agent '{name}' running, pid {self.pid}, socket {self.socket}")

    def log_tail(self, size=400):
        try:
            return self.log_path.read_bytes()[-size:].decode(errors="replace").strip() or "(nothing logged)"
        except OSError:
            return "(no log)"

    def status(self):
        """`tokenctl agent status --json` as a dict, or None when no agent answers."""
        result = run([self.bench.tokenctl, "agent", "status", "--json"], capture_output=True, check=False,
                     env=self.bench.agent_env, timeout=10)
        return json.loads(result.stdout) if result.returncode == 0 else None

    def requests(self):
        status = self.status()
        if status is None:
            raise AgentError(f"the agent stopped answering: {self.log_tail()}")
        return status["requests"]

    def served(self, what, clients, action):
        """Runs `action`, then checks that the agent served at least `clients` requests
        meanwhile: fewer means clients fell back to the direct path, and the row would
        time that instead."""
        before = self.requests()
        result = action()
        served = self.requests() - before
        if served < clients:
            raise RuntimeError(f"{what}: the agent served {served} requests for {clients} clients; "
                               "the others took the direct path")
        return result

    def stop(self):
        """SIGTERM: the agent must exit with status 0 within 10 s, remove its socket, and
        have logged no token. Raises AgentError otherwise."""
        problems = []
        if self.process.poll() is not None:
            problems.append(f"it had already exited with status {self.process.returncode}")
        else:
            self.process.send_signal(signal.SIGTERM)
            try:
                status = self.process.wait(timeout=10)
                if status != 0:
                    problems.append(f"it exited with status {status} on SIGTERM")
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                problems.append("it did not exit within 10 s of SIGTERM (killed)")
        if self.socket.exists():
            problems.append(f"it left its socket {self.socket} behind")
        logged = self.log_path.read_bytes() if self.log_path.exists() else b""
        leaked = [token for token in self.bench.agent_tokens if token in logged]
        if leaked:
            problems.append(f"its log holds {len(leaked)} of the {len(self.bench.agent_tokens)} tokens clients got")
        if problems:
            raise AgentError(f"agent '{self.name}' (pid {self.pid}): " + "; ".join(problems) + f". Log: {self.log_tail()}")
        log(f"agent '{self.name}' stopped")


def one_shell(command):
    """`command` under a `sh -c` of its own, for hyperfine without its shell (-N). Its
    shell's start, which hyperfine measures and subtracts, is as long as the front end's
    whole answer, so a helper answered by it measured 0.0 ms (row 15): the tool rows time
    each side whole, one `sh` included on both."""
    return shlex.join(["sh", "-c", command])


def proc_cpu_ticks(pid):
    """utime + stime of the process (all its threads) and of its reaped children, in
    clock ticks, from /proc/PID/stat (fields 14-17)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15])


def proc_rss_parts_mib(pid):
    """The process's resident memory as /proc/PID/smaps_rollup splits it: (anonymous,
    file-backed) MiB."""
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        fields = {line.split(":")[0]: line.split()[1] for line in rollup if ":" in line and line.split()[1].isdigit()}
    anonymous = int(fields.get("Anonymous", 0))
    return anonymous / 1024, (int(fields["Rss"]) - anonymous) / 1024


def keyring_daemon_pid():
    """The pid of the Secret Service on this session bus (the private keyring's
    gnome-keyring-daemon), as the bus tells it."""
    out = run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
               "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", "org.freedesktop.secrets"],
              capture_output=True).stdout.decode()
    return int(out.strip("()\n ,").split()[-1])


def proc_status_kib(pid, name):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    raise KeyError(name)


class Bench:
    def __init__(self, args):
        self.args = args
        self.bin = Path(args.bin).resolve()
        self.before = Path(args.before_bin).resolve() if args.before_bin else None
        self.before_front_end = Path(args.before_front_end_bin).resolve() if args.before_front_end_bin else None
        self.scratch = Path(tempfile.mkdtemp(prefix="tokenctl-bench-"))
        # What users run once `make install` ran: the front end under the names `tokenctl`
        # and `git-credential-tokenctl` (links to it, which find the full program beside
        # their target), when this build has one; the full program is timed too (row 12).
        self.full_tokenctl = str(self.bin / "tokenctl")
        front_end = self.bin / "tokenctl-front-end"
        if front_end.exists():
            installed = self.scratch / "bin"
            installed.mkdir()
            for name in ["tokenctl", "git-credential-tokenctl"]:
                (installed / name).symlink_to(front_end)
            self.tokenctl = str(installed / "tokenctl")
            self.helper = str(installed / "git-credential-tokenctl")
        else:
            self.tokenctl = self.full_tokenctl
            self.helper = str(self.bin / "git-credential-tokenctl")
        self.agent = None
        self.agent_failures = []
        # Tokens clients printed through the agent: none may appear in its log.
        self.agent_tokens = set()
        self.rows = []
        self.notes = []
        self.results = {}
        config_home = Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config"))
        self.types_dir = config_home / "tokenctl" / "types"
        self.config_file = config_home / "tokenctl" / "config.toml"
        # The rows of the direct path say so explicitly, so that an agent running on the
        # machine cannot answer them.
        os.environ["TOKENCTL_AGENT"] = "0"
        # git reads no configuration but what a command line gives it.
        self.git_env = dict(
            os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", GIT_TERMINAL_PROMPT="0")
        os.environ.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", GIT_TERMINAL_PROMPT="0")
        # The rows through the agent: its socket in the scratch folder, nothing forcing
        # the direct path. The agent itself runs with this environment too.
        self.agent_socket = self.scratch / "agent" / "agent.sock"
        self.agent_env = {k: v for k, v in self.git_env.items() if k != "TOKENCTL_AGENT"}
        self.agent_env["TOKENCTL_AGENT_SOCKET"] = str(self.agent_socket)

    # MARK: - Servers and fixtures

    def start_stub(self, name="stub", access_seconds=3600, revoke_on_rotation=False):
        """Starts a stub authorization server (--lifetime is how long the server runs);
        returns its base URL. `revoke_on_rotation`: a refresh revokes the access tokens
        issued before it, as django-oauth-toolkit does."""
        state = self.scratch / name
        state.mkdir()
        subprocess.Popen(
            [str(ROOT / "Tests/Support/stub-oauth-server.py"), "--state-dir", str(state), "--lifetime", "3600",
             "--access-token-seconds", str(access_seconds), "--watch-pid", str(os.getpid())]
            + (["--revoke-on-rotation"] if revoke_on_rotation else []),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if (state / "stub.json").exists():
                break
            time.sleep(0.05)
        base = json.loads((state / "stub.json").read_text())["base_url"]
        log(f"{name} authorization server at {base} ({access_seconds} s access tokens)")
        if name == "stub":
            self.stub = base
        return base

    def stub_admin(self, path, method="GET", base=None, form=None):
        data = urllib.parse.urlencode(form).encode() if form else (b"" if method == "POST" else None)
        request = urllib.request.Request((base or self.stub) + path, method=method, data=data)
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"{}")

    def write_type(self):
        self.types_dir.mkdir(parents=True, exist_ok=True)
        (self.types_dir / f"{TYPE}.toml").write_text(
            f'id = "{TYPE}"\ndisplay_name = "Benchmark (stub server)"\nissuer = "{self.stub}"\n'
            f'client_id = "bench"\n\n[git]\nhosts = ["127.0.0.1"]\nusername = "oauth2"\n')
        (self.types_dir / f"{EXPIRED_TYPE}.toml").write_text(
            f'id = "{EXPIRED_TYPE}"\ndisplay_name = "Benchmark, expired tokens"\nissuer = "{self.stub}"\n'
            f'client_id = "bench"\n')

    def write_fresh_type(self):
        """Row 8's type and account: a second stub whose access tokens last FRESH_LIFETIME
        seconds (no [git] table: git's host stays TYPE's alone). The account is stored
        before any agent starts, as an account signed in earlier would be; its access
        token has expired by row 8, whose first request refreshes it."""
        self.fresh_stub = self.start_stub("fresh-stub", FRESH_LIFETIME, revoke_on_rotation=True)
        (self.types_dir / f"{FRESH_TYPE}.toml").write_text(
            f'id = "{FRESH_TYPE}"\ndisplay_name = "Benchmark, short-lived tokens"\n'
            f'issuer = "{self.fresh_stub}"\nclient_id = "bench"\n')
        family = self.stub_admin("/_admin/issue", "POST", base=self.fresh_stub)
        assert family["expires_in"] == FRESH_LIFETIME, family
        self.store_item("bench-fresh", "fresh", family["access_token"], family["refresh_token"],
                        int(time.time()) + FRESH_LIFETIME, type_=FRESH_TYPE, issuer=self.fresh_stub)

    @staticmethod
    def store_item(account, name, access, refresh, expires, group="default", type_=TYPE, issuer=None):
        """Stores an account as tokenctl does (tokenctl-keyring(5)), with secret-tool."""
        now = int(time.time())
        secret = {"version": 1, "access_token": access, "token_type": "Bearer", "expires_at": expires,
                  "issued_at": now}
        if refresh:
            secret["refresh_token"] = refresh
        attributes = ["xdg:schema", SCHEMA, "type", type_, "account", account, "group", group, "name", name,
                      "scopes", "openid", "created", str(now), "updated", str(now), "expires", str(expires),
                      "refreshable", "true" if refresh else "false", "client-id", "bench", "state", "ok"]
        if issuer:
            attributes += ["issuer", issuer]
        label = f"tokenctl: {type_} — {name}" + ("" if group == "default" else f" [{group}]")
        run(["secret-tool", "store", "--label", label] + attributes, input=json.dumps(secret).encode())

    def lookup_argv(self, account, group="default"):
        return ["secret-tool", "lookup", "xdg:schema", SCHEMA, "type", TYPE, "account", account, "group", group]

    def write_prepare_script(self):
        """A script that stores account `expired` with a new refresh token family and an
        expiry in the past: hyperfine runs it before every timed run of row 3."""
        script = self.scratch / "prepare-expired"
        script.write_text(f"""#!/bin/sh
set -e
# Clear first: a store whose attributes differ (expires does) adds an item beside the old one.
secret-tool clear xdg:schema {SCHEMA} type {EXPIRED_TYPE} account bench-expired group default || true
family=$(curl -sf -X POST {self.stub}/_admin/issue)
refresh=$(printf '%s' "$family" | sed -n 's/.*"refresh_token": *"\\([^"]*\\)".*/\\1/p')
now=$(date +%s)
printf '{{"version":1,"access_token":"expired-access-token","refresh_token":"%s","token_type":"Bearer","expires_at":%d,"issued_at":%d}}' \\
  "$refresh" $((now - 60)) $((now - 3660)) |
  secret-tool store --label "tokenctl: {EXPIRED_TYPE} — expired" xdg:schema {SCHEMA} type {EXPIRED_TYPE} account bench-expired \\
    group default name expired scopes openid created $now updated $now expires $((now - 60)) refreshable true \\
    issuer {self.stub} client-id bench state ok
""")
        script.chmod(0o755)
        # The baseline: the least a refresh takes from a shell, three programs.
        baseline = self.scratch / "baseline-refresh"
        baseline.write_text(f"""#!/bin/bash
set -euo pipefail
stored=$(secret-tool lookup xdg:schema {SCHEMA} type {EXPIRED_TYPE} account bench-expired group default)
[[ $stored =~ \\"refresh_token\\":\\"([^\\"]*)\\" ]]
answer=$(curl -sf -X POST -d grant_type=refresh_token -d client_id=bench --data-urlencode "refresh_token=${{BASH_REMATCH[1]}}" \\
  {self.stub}/token)
[[ $answer =~ \\"access_token\\":\\ *\\"([^\\"]*)\\" ]]; access=${{BASH_REMATCH[1]}}
[[ $answer =~ \\"refresh_token\\":\\ *\\"([^\\"]*)\\" ]]; refresh=${{BASH_REMATCH[1]}}
now=$(date +%s)
printf '{{"version":1,"access_token":"%s","refresh_token":"%s","token_type":"Bearer","expires_at":%d,"issued_at":%d}}' \\
  "$access" "$refresh" $((now + 3600)) $now |
  secret-tool store --label "tokenctl: {EXPIRED_TYPE} — expired" xdg:schema {SCHEMA} type {EXPIRED_TYPE} account bench-expired \\
    group default name expired scopes openid created $now updated $now expires $((now + 3600)) refreshable true \\
    issuer {self.stub} client-id bench state ok
printf '%s\\n' "$access"
""")
        baseline.chmod(0o755)
        return str(script), str(baseline)

    def build_libsecret_helper(self):
        source = Path("/usr/share/doc/git/contrib/credential/libsecret")
        build = self.scratch / "libsecret-helper"
        shutil.copytree(source, build)
        run(["make", "-s", "-C", str(build)], stdout=subprocess.DEVNULL)
        return str(build / "git-credential-libsecret")

    # MARK: - Measuring

    def hyperfine(self, commands, runs=None, prepare=None, shell=False, warmup=3, env=None):
        """Times `commands` ([(name, command line)]) in one hyperfine run, in `env` (else
        this process's environment); returns {name: {"median": s, "times": [...]}}."""
        runs = runs or self.args.runs
        export = self.scratch / f"hyperfine-{len(self.results)}-{time.monotonic_ns()}.json"
        argv = ["hyperfine", "--style", "basic", "--warmup", str(warmup), "--runs", str(runs),
                "--export-json", str(export)]
        if not shell:
            argv.append("-N")
        for name, command in commands:
            argv += ["--command-name", name]
        if prepare:
            for each in prepare if isinstance(prepare, list) else [prepare] * len(commands):
                argv += ["--prepare", each]
        argv += [command for _, command in commands]
        run(argv, stdout=sys.stderr, env=env)
        results = json.loads(export.read_text())["results"]
        return {r["command"]: {"median": r["median"], "times": r["times"]} for r in results}

    def hyperfine_alternated(self, commands, env=None):
        """Times `commands` as `hyperfine` does, in one invocation per command order (each
        command first once, then in the same rotations again), their times pooled: for the
        rows that compare commands of 1-5 ms with a goal of "no slower" (12, 14, 22).
        hyperfine times each command's runs in one batch, one after the other, and this
        machine's speed drifts between batches: two batches of 300 runs of the same two
        commands differed by 20%, and a 30-run median of row 14's `--help` went from 0.59
        to 1.20 over one stop's runs. Returns what `hyperfine` returns; `rounds * runs`
        runs of each command."""
        rounds = len(commands) * (1 if self.args.quick else 2)
        pooled = {name: [] for name, _ in commands}
        for index in range(rounds):
            shift = index % len(commands)
            r = self.hyperfine(commands[shift:] + commands[:shift], env=env)
            for name in pooled:
                pooled[name] += r[name]["times"]
        return {name: {"median": statistics.median(times), "times": times} for name, times in pooled.items()}

    def add(self, number, what, ours, baseline, goal, ratio_goal, unit="ms", note=""):
        ratio = ours / baseline if baseline else None
        met = ratio is not None and ratio <= ratio_goal
        self.rows.append((number, what, ours, baseline, ratio, goal, met, unit, note))
        self.results[f"{number}: {what}"] = {"ours": ours, "baseline": baseline, "ratio": ratio, "met": met}

    def add_plain(self, number, what, ours, baseline_text, goal, met, note=""):
        self.rows.append((number, what, ours, baseline_text, None, goal, met, "", note))
        self.results[f"{number}: {what}"] = {"ours": ours, "baseline": baseline_text, "met": met}

    # MARK: - The rows

    def row1_token(self):
        now = int(time.time())
        self.store_item("bench-oid", "ada", "bench-access-token", "r", now + 86400, issuer=self.stub)
        account = f"{TYPE}:ada"
        commands = [
            ("secret-tool lookup", shlex.join(self.lookup_argv("bench-oid"))),
            ("tokenctl token", shlex.join([self.tokenctl, "token", account])),
        ]
        if self.before:
            commands.append(("tokenctl token (before)", shlex.join([str(self.before / "tokenctl"), "token", account])))
        for _, command in commands[1:]:
            out = run(shlex.split(command), capture_output=True).stdout
            assert out == b"bench-access-token\n", out
        r = self.hyperfine(commands)
        self.add(1, "`tokenctl token` (valid) vs `secret-tool lookup`", r["tokenctl token"]["median"],
                 r["secret-tool lookup"]["median"], f"≤ {GOAL_DIRECT_RATIO}", GOAL_DIRECT_RATIO)
        if self.before:
            self.add(10, "direct path, `tokenctl token` (valid): this build vs the one before the agent",
                     r["tokenctl token"]["median"], r["tokenctl token (before)"]["median"], "≤ 1.0", 1.0,
                     note="same hyperfine run as row 1")

    def row2_git(self):
        libsecret = self.build_libsecret_helper()
        request = self.scratch / "git-request"
        request.write_text("protocol=http\nhost=127.0.0.1\n\n")
        # The libsecret helper's item: the same credential ours gives, stored through git.
        run(["git", "-c", "credential.helper=", "-c", f"credential.helper={libsecret}", "credential", "approve"],
            input=b"protocol=http\nhost=127.0.0.1\nusername=oauth2\npassword=bench-access-token\n\n",
            env=self.git_env)
        helpers = [("libsecret", libsecret), ("tokenctl", self.helper)]
        if self.before:
            helpers.append(("tokenctl (before)", str(self.before / "git-credential-tokenctl")))
        fills, gets = {}, {}
        for name, helper in helpers:
            out = run(["git", "-c", "credential.helper=", "-c", f"credential.helper={helper}", "credential", "fill"],
                      input=request.read_bytes(), capture_output=True, env=self.git_env).stdout
            assert b"password=bench-access-token" in out, (name, out)
            fills[name] = (f"git -c credential.helper= -c credential.helper={shlex.quote(helper)} "
                           f"credential fill < {request}")
            gets[name] = f"{shlex.quote(helper)} get < {request}"
        r = self.hyperfine([(f"git fill via {name}", fills[name]) for name, _ in helpers], shell=True)
        self.add(2, "`git credential fill`: tokenctl vs contrib libsecret helper",
                 r["git fill via tokenctl"]["median"], r["git fill via libsecret"]["median"], "≤ 1.0", 1.0)
        if self.before:
            self.add(10, "direct path, `git credential fill`: this build vs the one before the agent",
                     r["git fill via tokenctl"]["median"], r["git fill via tokenctl (before)"]["median"], "≤ 1.0",
                     1.0, note="same hyperfine run as row 2")
        # The helpers alone, without git's own start-up diluting the ratio.
        r = self.hyperfine([(f"{name} get", gets[name]) for name, _ in helpers], shell=True)
        self.add("2b", "helper `get` alone: tokenctl vs libsecret", r["tokenctl get"]["median"],
                 r["libsecret get"]["median"], f"≤ {GOAL_DIRECT_RATIO}", GOAL_DIRECT_RATIO)
        if self.before:
            self.add(10, "direct path, helper `get` alone: this build vs the one before the agent",
                     r["tokenctl get"]["median"], r["tokenctl (before) get"]["median"], "≤ 1.0", 1.0,
                     note="same hyperfine run as row 2b")
        self.libsecret = libsecret
        self.request = request
        self.fills = fills
        self.gets = gets

    def row3_expired(self):
        prepare, baseline = self.write_prepare_script()
        self.prepare = prepare
        self.baseline_refresh = baseline
        run([prepare])
        # The first refresh fetches the discovery document into the cache, as any first use does.
        out = run([self.tokenctl, "token", f"{EXPIRED_TYPE}:expired"], capture_output=True).stdout.strip()
        assert out and out != b"expired-access-token", out
        run([prepare])
        out = run([baseline], capture_output=True).stdout.strip()
        assert out and out != b"expired-access-token", out
        before = self.stub_admin("/_admin/stats")["token_requests"]
        runs = max(10, self.args.runs // 2)
        r = self.hyperfine([
            ("lookup + curl + store", baseline),
            ("tokenctl token (expired)", shlex.join([self.tokenctl, "token", f"{EXPIRED_TYPE}:expired"])),
        ], runs=runs, prepare=prepare, warmup=2)
        after = self.stub_admin("/_admin/stats")["token_requests"]
        expected = 2 * (runs + 2)
        self.add(3, "expired token: `tokenctl token` vs lookup + curl POST + store",
                 r["tokenctl token (expired)"]["median"], r["lookup + curl + store"]["median"], "≤ 1.2", 1.2,
                 note=f"{after - before} token requests for {expected} runs")
        self.single_refresh = r["tokenctl token (expired)"]["median"]

    def row21_refresh_child(self):
        """Each run prepares row 3's expired account, then times one refresh child, or the
        floor, to its end; the three are interleaved so that the machine's load falls on
        each alike."""
        locks = Path(os.environ["XDG_RUNTIME_DIR"]) / "tokenctl" / "locks"
        # FileAccountLocks' name for the account: HashedName of group, type and id.
        name = hashlib.sha256(b"\0".join([b"default", EXPIRED_TYPE.encode(), b"bench-expired"])).hexdigest()[:32]
        lock = locks / f"{name}.lock"
        worker = ["_refresh-worker", "--group", "default", "--type", EXPIRED_TYPE, "--id", "bench-expired"]

        def timed(argv, lock_fd=None):
            """Wall seconds and peak RSS MiB of argv to its end, with `lock_fd` as its descriptor 3."""
            start = time.perf_counter()
            process = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                pass_fds=(3,) if lock_fd is not None else (),
                preexec_fn=(lambda: os.dup2(lock_fd, 3)) if lock_fd is not None else None)
            out = process.stdout.read()
            _, status, usage = os.wait4(process.pid, 0)
            elapsed = time.perf_counter() - start
            process.returncode = os.waitstatus_to_exitcode(status)
            assert process.returncode == 0, (argv, process.returncode, out)
            return elapsed, usage.ru_maxrss / 1024, out

        def child(program):
            run([self.prepare])
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                elapsed, rss, out = timed([program] + worker, fd)
            finally:
                os.close(fd)
            # The child's report: success says nothing else.
            assert json.loads(out) == {}, out
            return elapsed, rss

        def floor():
            run([self.prepare])
            elapsed, rss, out = timed([self.baseline_refresh])
            assert out.strip() and out.strip() != b"expired-access-token", out
            return elapsed, rss

        agent_program = str(self.bin / "tokenctl-agent")
        results = {"agent": [], "full": [], "floor": []}
        for _ in range(max(10, self.args.runs)):
            results["agent"].append(child(agent_program))
            results["full"].append(child(self.full_tokenctl))
            results["floor"].append(floor())
        time_of = {k: statistics.median(t for t, _ in v) for k, v in results.items()}
        rss_of = {k: statistics.median(r for _, r in v) for k, v in results.items()}
        self.add(21, "refresh child as the agent runs it vs lookup + curl POST + store", time_of["agent"],
                 time_of["floor"], "≤ 1.0", 1.0, note=f"the full program as the child: {time_of['full'] * 1000:.1f} ms")
        self.add(21, "refresh child's peak RSS vs the floor's largest program", rss_of["agent"], rss_of["floor"],
                 "≤ 1.0", 1.0, unit="MiB", note=f"the full program as the child: {rss_of['full']:.1f} MiB")

    def race(self, argv, count=32, env=None):
        """Starts `count` copies of argv at once; returns (wall seconds, exit codes, outputs)."""
        start = time.perf_counter()
        processes = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
                     for _ in range(count)]
        outputs = [p.communicate() for p in processes]
        wall = time.perf_counter() - start
        return wall, [p.returncode for p in processes], outputs

    def row4_race(self):
        rounds = 5 if self.args.quick else 10
        walls, lookups, requests, failures = [], [], [], 0
        for _ in range(rounds):
            # The same keyring clients, doing nothing but a lookup: the cost of 32 starts.
            wall, codes, _ = self.race(self.lookup_argv("bench-oid"))
            assert all(c == 0 for c in codes)
            lookups.append(wall)
            run([self.prepare])
            before = self.stub_admin("/_admin/stats")["token_requests"]
            wall, codes, outputs = self.race([self.tokenctl, "token", f"{EXPIRED_TYPE}:expired"])
            after = self.stub_admin("/_admin/stats")["token_requests"]
            walls.append(wall)
            requests.append(after - before)
            printed = {out for out, _ in outputs}
            failures += sum(1 for c in codes if c != 0)
            if len(printed) != 1 or b"expired-access-token\n" in printed:
                failures += 1
                log(f"race: {len(printed)} different outputs")
        wall = statistics.median(walls)
        self.add_plain(4, "32 processes on one expired token: token-endpoint requests",
                       f"{max(requests)} (max of {rounds} rounds)", "—", "1", max(requests) == 1)
        self.add_plain(4, "… failures", f"{failures} in {rounds * 32} processes", "—", "0", failures == 0)
        self.add(4, "… wall time vs one refresh (row 3)", wall, self.single_refresh, "≤ 2.0", 2.0,
                 note=f"32 concurrent `secret-tool lookup`s: {statistics.median(lookups) * 1000:.0f} ms")
        self.race_lookup = statistics.median(lookups)

    def row5_list(self):
        count = 200 if self.args.quick else 1000
        group = "bench-list"
        log(f"storing {count} accounts in group {group}")
        now = int(time.time())
        # A few secret-tool processes at a time; the daemon serializes them anyway.
        pending = []
        for i in range(count):
            secret = json.dumps({"version": 1, "access_token": f"a{i}", "refresh_token": f"r{i}",
                                 "token_type": "Bearer", "expires_at": now + 3600 + i, "issued_at": now})
            argv = ["secret-tool", "store", "--label", f"tokenctl: {TYPE} — user{i:04} [{group}]",
                    "xdg:schema", SCHEMA, "type", TYPE, "account", f"id-{i:04}", "group", group,
                    "name", f"user{i:04}", "scopes", "openid", "created", str(now), "updated", str(now),
                    "expires", str(now + 3600 + i), "refreshable", "true", "issuer", self.stub,
                    "client-id", "bench", "state", "ok"]
            p = subprocess.Popen(argv, stdin=subprocess.PIPE)
            p.stdin.write(secret.encode())
            p.stdin.close()
            pending.append(p)
            if len(pending) >= 4:
                assert pending.pop(0).wait() == 0
        assert all(p.wait() == 0 for p in pending)
        out = run([self.tokenctl, "list", "--group", group], capture_output=True).stdout.decode()
        assert out.count(TYPE) == count, out[:500]
        runs = max(10, self.args.runs // 2)
        r = self.hyperfine([
            ("secret-tool search --all", shlex.join(["secret-tool", "search", "--all", "xdg:schema", SCHEMA,
                                                     "group", group])),
            ("tokenctl list", shlex.join([self.tokenctl, "list", "--group", group])),
        ], runs=runs, warmup=2)
        self.add(5, f"`tokenctl list`, {count} accounts vs `secret-tool search --all`",
                 r["tokenctl list"]["median"], r["secret-tool search --all"]["median"], "≤ 1.0", 1.0)
        self.list_group, self.list_count = group, count

    def peak_rss(self, argv, stdin=None, env=None, runs=5):
        values = []
        for _ in range(runs):
            result = run(["/usr/bin/time", "-f", "%M", *argv], capture_output=True,
                         stdin=open(stdin, "rb") if stdin else subprocess.DEVNULL, env=env or self.git_env)
            values.append(int(result.stderr.decode().strip().splitlines()[-1]))
        return statistics.median(values) / 1024

    def check_get(self, env):
        """git's helper must answer with the token, or peak_rss would measure a refusal."""
        out = run([self.helper, "get"], stdin=open(self.request, "rb"), capture_output=True, env=env).stdout
        assert b"password=bench-access-token" in out, out

    def row6_memory(self):
        self.check_get(self.git_env)
        token = self.peak_rss([self.tokenctl, "token", f"{TYPE}:ada"])
        lookup = self.peak_rss(self.lookup_argv("bench-oid"))
        get = self.peak_rss([self.helper, "get"], stdin=self.request)
        libsecret = self.peak_rss([self.libsecret, "get"], stdin=self.request)
        self.add_plain(6, "peak RSS, `tokenctl token`", f"{token:.1f} MiB", f"secret-tool lookup {lookup:.1f} MiB",
                       f"≤ {GOAL_RSS_MIB} MiB", token <= GOAL_RSS_MIB)
        self.add_plain(6, "peak RSS, `git-credential-tokenctl get`", f"{get:.1f} MiB",
                       f"libsecret helper {libsecret:.1f} MiB", f"≤ {GOAL_RSS_MIB} MiB", get <= GOAL_RSS_MIB)

    def row7_browser(self):
        if not (ROOT / ".build-python/venv/bin/python").exists():
            self.notes.append("Row 7 skipped: no test authorization server (`make auth-server-deps`).")
            return
        oauth = shutil.which("git-credential-oauth")
        if oauth is None:
            self.notes.append("Row 7 skipped: git-credential-oauth is not installed.")
            return
        state = self.scratch / "auth-server"
        run([str(ROOT / "Tests/Support/auth-server.sh"), "start", str(state), "--watch-pid", str(os.getpid()),
             "--lifetime", "3600"], stdout=subprocess.DEVNULL)
        server = json.loads((state / "server.json").read_text())
        client = server["clients"]["native"]
        client_id = client["client_id"] if isinstance(client, dict) else client
        browser = str(ROOT / "Tests/Support/scripted-browser.sh")
        # git-credential-oauth 0.4.2 opens the browser with `open` (then xdg-open); it does
        # not read BROWSER.
        shim = self.scratch / "bin"
        shim.mkdir()
        for name in ["open", "xdg-open"]:
            (shim / name).write_text(f'#!/bin/sh\nexec {shlex.quote(browser)} "$@"\n')
            (shim / name).chmod(0o755)
        env_file = self.scratch / "browser-env"
        env_file.write_text(
            f"export BROWSER={shlex.quote(browser)} SCRIPTED_BROWSER_ACTION=allow "
            f"SCRIPTED_BROWSER_SERVER_JSON={shlex.quote(str(state / 'server.json'))} "
            f"PATH={shlex.quote(str(shim))}:\"$PATH\"\n")
        self.config_file.parent.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(f'[types.oidc]\nissuer = "{server["issuer"]}"\nclient_id = "{client_id}"\n')
        # 0.4.2 takes the endpoints as paths on the remote's host, and listens on the port
        # of its redirect URL (the server accepts any port of http://127.0.0.1/, RFC 8252).
        host = f"127.0.0.1:{server['port']}"
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            redirect_port = probe.getsockname()[1]
        path = lambda url: "/" + url.split("/", 3)[3]
        endpoints = server["endpoints"]
        oauth_config = (
            f"-c credential.oauthClientId={client_id} -c credential.oauthScopes='openid profile' "
            f"-c credential.oauthAuthURL={path(endpoints['authorization'])} "
            f"-c credential.oauthTokenURL={path(endpoints['token'])} "
            f"-c credential.oauthRedirectURL=http://127.0.0.1:{redirect_port}/")
        git_oauth = (f". {env_file} && printf 'protocol=http\\nhost={host}\\n\\n' | git -c credential.helper= "
                     f"{oauth_config} -c credential.helper=oauth credential fill")
        login = f". {env_file} && {shlex.quote(self.tokenctl)} login oidc --browser"
        for name, command in [("git-credential-oauth", git_oauth), ("tokenctl login", login)]:
            result = run(["bash", "-c", command], capture_output=True, check=False, timeout=120,
                         stdin=subprocess.DEVNULL)
            if result.returncode != 0 or (name == "git-credential-oauth" and b"password=" not in result.stdout):
                self.notes.append(f"Row 7: {name} failed: {result.stderr.decode(errors='replace')[-400:]}")
                return
        runs = 5 if self.args.quick else 10
        r = self.hyperfine([("git-credential-oauth (browser)", git_oauth), ("tokenctl login (browser)", login)],
                           runs=runs, warmup=1, shell=True)
        self.add(7, "storage miss: `tokenctl login` vs git-credential-oauth, scripted browser",
                 r["tokenctl login (browser)"]["median"], r["git-credential-oauth (browser)"]["median"],
                 "(report)", float("inf"))

    # MARK: - Through the agent

    def ensure_agent(self):
        """The agent the rows through it share, started on first use."""
        if self.agent is None:
            self.agent = Agent(self, "shared")
        return self.agent

    def stop_agent(self):
        """Stops the running agent; a failure is recorded, and fails the script at the end."""
        agent, self.agent = self.agent, None
        if agent is None:
            return
        try:
            agent.stop()
        except AgentError as error:
            log(f"FAILED: {error}")
            self.agent_failures.append(str(error))

    def row1a_token_agent(self):
        agent = self.ensure_agent()
        account = f"{TYPE}:ada"
        out = run([self.tokenctl, "token", account], capture_output=True, env=self.agent_env).stdout
        assert out == b"bench-access-token\n", out
        self.agent_tokens.add(out.strip())
        r = agent.served("row 1a", self.args.runs, lambda: self.hyperfine([
            ("secret-tool lookup", shlex.join(self.lookup_argv("bench-oid"))),
            ("tokenctl token (agent)", shlex.join([self.tokenctl, "token", account])),
        ], env=self.agent_env))
        self.add("1a", "`tokenctl token` (valid) through the agent vs `secret-tool lookup`",
                 r["tokenctl token (agent)"]["median"], r["secret-tool lookup"]["median"], f"≤ {GOAL_AGENT_RATIO}",
                 GOAL_AGENT_RATIO)

    def missing_peers(self, row, tools):
        """The peers' tools of `row` that are not installed (noted, and the row skipped)."""
        missing = [tool for tool in tools if shutil.which(tool) is None]
        if missing:
            self.notes.append(f"Row {row} skipped: {', '.join(missing)} not installed (make bench-deps).")
        return missing

    @contextlib.contextmanager
    def oidc_agent(self):
        """oidc-agent (its own agent, on the same stub server, set up by oidc-gen's flags
        with a refresh token the stub issued, as account `bench`), stopped afterwards;
        yields the environment its clients need."""
        oidc_env = dict(self.agent_env, OIDC_CONFIG_DIR=str(self.scratch / f"oidc-agent-{time.monotonic_ns()}"))
        Path(oidc_env["OIDC_CONFIG_DIR"]).mkdir(mode=0o700)
        started = run(["oidc-agent", "--no-autoload", "--no-webserver", "--no-scheme"], capture_output=True,
                      env=oidc_env).stdout.decode()
        for name in ["OIDC_SOCK", "OIDCD_PID"]:
            value = started.split(f"{name}=", 1)[1].split(";", 1)[0]
            oidc_env[name] = value
        try:
            family = self.stub_admin("/_admin/issue", method="POST")
            run(["oidc-gen", "bench", f"--issuer={self.stub}", "--client-id=bench", "--client-secret=bench",
                 f"--rt={family['refresh_token']}", "--scope=openid", "--pw-cmd=echo bench-password",
                 "--confirm-default", "--redirect-uri=http://localhost:4242", "--no-url-call"],
                capture_output=True, stdin=subprocess.DEVNULL, env=oidc_env, timeout=60)
            yield oidc_env
        finally:
            if oidc_env.get("OIDCD_PID", "").isdigit():
                os.kill(int(oidc_env["OIDCD_PID"]), signal.SIGTERM)

    def row12_peers(self):
        """Against the peers: `oidc-token` through oidc-agent (``oidc_agent``), and git's
        fill through a C helper that prints a fixed password."""
        agent = self.ensure_agent()
        account = f"{TYPE}:ada"
        if self.missing_peers(12, ["oidc-agent", "oidc-gen", "oidc-token", "cc"]):
            return
        with self.oidc_agent() as oidc_env:
            out = run(["oidc-token", "bench"], capture_output=True, env=oidc_env).stdout
            assert out.strip(), "oidc-token printed nothing"
            ours = run([self.tokenctl, "token", account], capture_output=True, env=self.agent_env).stdout
            assert ours == b"bench-access-token\n", ours
            # hyperfine gives every command one environment: oidc-token's socket is named
            # in it, which tokenctl does not read.
            both = dict(self.agent_env, OIDC_SOCK=oidc_env["OIDC_SOCK"])
            commands = [
                ("oidc-token (oidc-agent)", "oidc-token bench"),
                ("tokenctl token (agent)", shlex.join([self.tokenctl, "token", account])),
                ("full program token (agent)", shlex.join([self.full_tokenctl, "token", account])),
            ]
            r = agent.served("row 12", 2 * self.args.runs, lambda: self.hyperfine_alternated(commands, env=both))
            self.add(12, "`tokenctl token` through the agent vs `oidc-token` through oidc-agent",
                     r["tokenctl token (agent)"]["median"], r["oidc-token (oidc-agent)"]["median"], "≤ 1.0", 1.0)
            self.add(12, "… the full program alone through the agent (no front end) vs `oidc-token`",
                     r["full program token (agent)"]["median"], r["oidc-token (oidc-agent)"]["median"],
                     "(report)", float("inf"))
        # A helper that does nothing but answer: the floor of any `git credential fill`.
        source = self.scratch / "fixed-helper.c"
        source.write_text(
            "#include <stdio.h>\n"
            "int main(void) { char b[4096]; while (fread(b, 1, sizeof b, stdin) > 0) {}\n"
            "  fputs(\"username=oauth2\\npassword=bench-access-token\\n\", stdout); return 0; }\n")
        fixed = self.scratch / "fixed-helper"
        run(["cc", "-O2", "-o", str(fixed), str(source)])
        fill = (f"git -c credential.helper= -c credential.helper={shlex.quote(str(fixed))} "
                f"credential fill < {self.request}")
        r = agent.served("row 12, git", self.args.runs, lambda: self.hyperfine([
            ("git fill via a fixed C helper", fill),
            ("git fill via tokenctl (agent)", self.fills["tokenctl"]),
        ], shell=True, env=self.agent_env))
        ours, floor = r["git fill via tokenctl (agent)"]["median"], r["git fill via a fixed C helper"]["median"]
        self.add_plain(12, "`git credential fill` through the agent vs a C helper printing a fixed password",
                       f"{ours * 1000:.1f} ms", f"C helper {floor * 1000:.1f} ms", "≤ C helper + 2 ms",
                       ours <= floor + 0.002)

    def row22_cold_peers(self):
        """The peers' commands that start cold: `--help`, and the agent's list of accounts
        against oidc-agent's (row 1's and 2's accounts; oidc-agent's one, ``oidc_agent``)."""
        agent = self.ensure_agent()
        if self.missing_peers(22, ["oidc-agent", "oidc-gen", "oidc-token", "oidc-add"]):
            return
        commands = [
            ("oidc-token --help", "oidc-token --help"),
            ("tokenctl --help", shlex.join([self.tokenctl, "--help"])),
            ("full program --help", shlex.join([self.full_tokenctl, "--help"])),
        ]
        for _, command in commands[1:]:
            out = run(shlex.split(command), capture_output=True).stdout.decode()
            assert out.startswith("OVERVIEW: "), out[:200]
        r = self.hyperfine_alternated(commands)
        self.add(22, "`tokenctl --help` as installed vs `oidc-token --help`", r["tokenctl --help"]["median"],
                 r["oidc-token --help"]["median"], "≤ 1.0", 1.0)
        self.add(22, "… the full program alone vs `oidc-token --help`", r["full program --help"]["median"],
                 r["oidc-token --help"]["median"], "(report)", float("inf"))
        with self.oidc_agent() as oidc_env:
            listed = run(["oidc-add", "-l"], capture_output=True, env=oidc_env).stdout
            assert b"bench" in listed, listed
            for program in [self.tokenctl, self.full_tokenctl]:
                out = run([program, "list"], capture_output=True, env=self.agent_env).stdout.decode()
                assert f"{TYPE}  " in out and "ada" in out, out[:500]
            both = dict(self.agent_env, OIDC_SOCK=oidc_env["OIDC_SOCK"], OIDC_CONFIG_DIR=oidc_env["OIDC_CONFIG_DIR"])
            commands = [
                ("oidc-add -l", "oidc-add -l"),
                ("tokenctl list (agent)", shlex.join([self.tokenctl, "list"])),
                ("full program list (agent)", shlex.join([self.full_tokenctl, "list"])),
            ]
            r = agent.served("row 22", 2 * self.args.runs, lambda: self.hyperfine_alternated(commands, env=both))
        self.add(22, "`tokenctl list` through the agent vs `oidc-add -l`", r["tokenctl list (agent)"]["median"],
                 r["oidc-add -l"]["median"], "≤ 1.0", 1.0)
        self.add(22, "… the full program alone through the agent vs `oidc-add -l`",
                 r["full program list (agent)"]["median"], r["oidc-add -l"]["median"], "(report)", float("inf"))

    def row15_docker(self):
        """Docker's helper `get` through the agent vs `git credential fill` through
        it, for the same host (goal: no slower)."""
        agent = self.ensure_agent()
        docker = Path(self.helper).parent / "docker-credential-tokenctl"
        if not docker.exists():
            target = self.bin / ("tokenctl-front-end" if Path(self.helper).is_symlink() else "docker-credential-tokenctl")
            docker.symlink_to(target)
        server = self.scratch / "docker-server"
        server.write_text("http://127.0.0.1\n")
        out = run([str(docker), "get"], input=server.read_bytes(), capture_output=True, env=self.agent_env).stdout
        assert b"bench-access-token" in out, out
        r = agent.served("row 15", 2 * self.args.runs, lambda: self.hyperfine([
            ("git fill via tokenctl (agent)", one_shell(self.fills["tokenctl"])),
            ("docker get (agent)", one_shell(f"{shlex.quote(str(docker))} get < {server}")),
        ], env=self.agent_env))
        self.add(15, "`docker-credential-tokenctl get` through the agent vs `git credential fill` through it",
                 r["docker get (agent)"]["median"], r["git fill via tokenctl (agent)"]["median"], "≤ 1.0", 1.0)

    def row16_cargo(self):
        """cargo's credential provider `get` (`tokenctl --cargo-plugin`, one request
        on standard input, as cargo runs it) through the agent vs `git credential fill`
        through it, for the same host (goal: no slower)."""
        agent = self.ensure_agent()
        request = self.scratch / "cargo-request"
        request.write_text(json.dumps({
            "v": 1, "registry": {"index-url": "sparse+http://127.0.0.1/index/", "name": "bench"},
            "kind": "get", "operation": "read", "args": []}) + "\n")
        out = run([self.tokenctl, "--cargo-plugin"], input=request.read_bytes(), capture_output=True,
                  env=self.agent_env).stdout
        assert b"Bearer bench-access-token" in out, out
        r = agent.served("row 16", 2 * self.args.runs, lambda: self.hyperfine([
            ("git fill via tokenctl (agent)", one_shell(self.fills["tokenctl"])),
            ("cargo get (agent)", one_shell(f"{shlex.quote(self.tokenctl)} --cargo-plugin < {request}")),
        ], env=self.agent_env))
        self.add(16, "cargo's credential provider `get` through the agent vs `git credential fill` through it",
                 r["cargo get (agent)"]["median"], r["git fill via tokenctl (agent)"]["median"], "≤ 1.0", 1.0)

    def row19_forwarded(self):
        """`tokenctl token` through a forwarded agent, timed on the remote side, against the
        local agent's answer plus the round trip of the same ssh session."""
        missing = [tool for tool in ["socat", "/usr/sbin/sshd"] if shutil.which(tool) is None]
        if os.getuid() != 0 or missing:
            self.notes.append("Row 19 skipped: needs root (it makes the remote user) and "
                              + (", ".join(missing) or "nothing else") + " (make deps bench-deps).")
            return
        agent = self.ensure_agent()
        account = f"{TYPE}:ada"
        front_end = self.bin / "tokenctl-front-end"
        directory = self.scratch / "forwarding"
        directory.mkdir()
        port = 20_000 + (os.getpid() + 1) % 20_000
        run([str(ROOT / "Tests/Support/forwarding-sshd.sh"), str(directory), str(port),
             str(front_end if front_end.exists() else self.full_tokenctl)])
        sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", str(directory / "sshd_config"),
                                 "-E", str(directory / "sshd.log")])
        echo_socket = directory / "echo.sock"
        echo = subprocess.Popen(["socat", f"UNIX-LISTEN:{echo_socket},fork", "EXEC:cat"])
        remote_echo = f"/tmp/tokenctl-bench-echo-{os.getpid()}.sock"
        home = Path("/home/tokenctl-fwd")
        try:
            for _ in range(100):
                if subprocess.run(["bash", "-c", f"exec 3<>/dev/tcp/127.0.0.1/{port}"],
                                  stderr=subprocess.DEVNULL).returncode == 0 and echo_socket.exists():
                    break
                time.sleep(0.1)
            run([self.tokenctl, "allow", "--host", "127.0.0.1", account], env=self.agent_env)
            line = self.scratch / "echo-line"
            line.write_text("x\n")
            runs = self.args.runs
            ssh_options = ["-F", "/dev/null", "-p", str(port), "-i", str(directory / "client"),
                           "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                           "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-R", f"{remote_echo}:{echo_socket}"]
            # Both timed there, in one session: the token, then the echo through the same ssh.
            remote = (
                f"test \"$($HOME/bin/tokenctl token {account})\" = bench-access-token && "
                "printf 'x\\n' > $HOME/echo-line && "
                f"hyperfine -N --style basic --warmup 3 --runs {runs} --export-json $HOME/bench-forwarded.json "
                f"--command-name forwarded \"$HOME/bin/tokenctl token {account}\" "
                f"--command-name echo \"socat -t 5 GOPEN:$HOME/echo-line!!GOPEN:/dev/null UNIX-CONNECT:{remote_echo}\" >&2")
            served = agent.requests()
            run([self.tokenctl, "ssh"] + ssh_options + ["tokenctl-fwd@127.0.0.1", remote],
                stdout=sys.stderr, env=self.agent_env)
            if agent.requests() - served < runs:
                raise RuntimeError("row 19: the forwarded agent did not answer every run")
            there = {r["command"]: r["median"]
                     for r in json.loads((home / "bench-forwarded.json").read_text())["results"]}
            r = agent.served("row 19", runs, lambda: self.hyperfine([
                ("tokenctl token (agent)", shlex.join([self.tokenctl, "token", account]))], env=self.agent_env))
            # The line is read from a file and the echo dropped (socat's read!!write address):
            # hyperfine gives its commands no standard input to send.
            here = self.hyperfine([("echo", shlex.join(
                ["socat", "-t", "5", f"GOPEN:{line}!!GOPEN:/dev/null", f"UNIX-CONNECT:{echo_socket}"]))],
                env=self.agent_env)
            local = r["tokenctl token (agent)"]["median"]
            round_trip = max(there["echo"] - here["echo"]["median"], 0.0)
            self.add("19", "`tokenctl token` over `tokenctl ssh` vs through the local agent plus the ssh round trip",
                     there["forwarded"], local + round_trip, "≤ 1.0", 1.0,
                     note=f"local {local * 1000:.2f} ms, round trip {round_trip * 1000:.2f} ms "
                          "(a socat echo through `ssh -R` of the same session, less the same echo here)")
        finally:
            for process in [echo, sshd]:
                process.terminate()
                process.wait()
            run([self.tokenctl, "deny", "--host", "127.0.0.1"], env=self.agent_env)
            for leftover in [Path(remote_echo), home / "bench-forwarded.json", home / "echo-line"]:
                leftover.unlink(missing_ok=True)

    def row17_kube(self):
        """kubectl's exec credential (`tokenctl kube-credential`, the cluster in
        KUBERNETES_EXEC_INFO, as kubectl runs it with provideClusterInfo) through the agent
        vs `git credential fill` through it, for the same host (goal: no slower)."""
        agent = self.ensure_agent()
        info = json.dumps({
            "apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
            "spec": {"interactive": False, "cluster": {"server": "https://127.0.0.1"}}})
        out = run([self.tokenctl, "kube-credential"], capture_output=True,
                  env=dict(self.agent_env, KUBERNETES_EXEC_INFO=info)).stdout
        assert b'"token":"bench-access-token"' in out.replace(b" ", b""), out
        r = agent.served("row 17", 2 * self.args.runs, lambda: self.hyperfine([
            ("git fill via tokenctl (agent)", one_shell(self.fills["tokenctl"])),
            ("kube-credential (agent)", one_shell(
                f"KUBERNETES_EXEC_INFO={shlex.quote(info)} {shlex.quote(self.tokenctl)} kube-credential")),
        ], env=self.agent_env))
        self.add(17, "`tokenctl kube-credential` through the agent vs `git credential fill` through it",
                 r["kube-credential (agent)"]["median"], r["git fill via tokenctl (agent)"]["median"], "≤ 1.0", 1.0)

    def row14_start(self):
        """`tokenctl --version` and `--help` as installed (the front end) no slower than
        the full program run alone."""
        commands = [
            ("version, full program", shlex.join([self.full_tokenctl, "--version"])),
            ("version, installed", shlex.join([self.tokenctl, "--version"])),
            ("help, full program", shlex.join([self.full_tokenctl, "--help"])),
            ("help, installed", shlex.join([self.tokenctl, "--help"])),
        ]
        before = self.before_front_end
        if before:
            commands += [
                ("version, before", shlex.join([str(before / "tokenctl"), "--version"])),
                ("help, before", shlex.join([str(before / "tokenctl"), "--help"])),
            ]
        r = self.hyperfine_alternated(commands)
        for option in ["version", "help"]:
            installed = r[f"{option}, installed"]["median"]
            if before:
                self.add(14, f"`tokenctl --{option}` as installed vs the release before the front end", installed,
                         r[f"{option}, before"]["median"], "≤ 1.0", 1.0)
                self.add(14, "… vs this build's full program alone", installed,
                         r[f"{option}, full program"]["median"], "(report)", float("inf"))
            else:
                self.add(14, f"`tokenctl --{option}` as installed vs the full program alone", installed,
                         r[f"{option}, full program"]["median"], "≤ 1.0", 1.0)

    def row11_dbus(self):
        self.ensure_agent()
        account = f"{TYPE}:ada"
        for application in ["/usr/bin/python3", "gdbus"]:
            run([self.tokenctl, "allow", application, account], capture_output=True, env=self.agent_env)
        gdbus = ["gdbus", "call", "--session", "--dest", "org.tokenctl.Agent", "--object-path", "/org/tokenctl/Agent",
                 "--method", "org.tokenctl.Agent1.GetAccessToken", "", account, "0"]
        out = run(gdbus, capture_output=True, env=self.agent_env).stdout
        assert b"bench-access-token" in out, out
        client = [
            "/usr/bin/python3", str(Path(__file__).resolve().parent.parent / "Support" / "dbus-client.py"), "bench",
            "300", "", account]
        r = self.hyperfine([
            ("secret-tool lookup", shlex.join(self.lookup_argv("bench-oid"))),
            ("gdbus call GetAccessToken", shlex.join(gdbus)),
        ], env=self.agent_env)
        persistent = json.loads(run(client, capture_output=True, env=self.agent_env).stdout)
        lookup = r["secret-tool lookup"]["median"]
        lookups = sorted(r["secret-tool lookup"]["times"])
        lookup_p99 = lookups[min(len(lookups) - 1, int(len(lookups) * 0.99))]
        self.add(11, "D-Bus `GetAccessToken` through `gdbus call` vs `secret-tool lookup`",
                 r["gdbus call GetAccessToken"]["median"], lookup, "(report)", float("inf"))
        self.add(11, "… one persistent dbus-python connection, median of 300 calls vs the lookup's median",
                 persistent["median_ms"] / 1000, lookup, "≤ 0.1", 0.1)
        self.add(11, "… its p99 vs the lookup's p99", persistent["p99_ms"] / 1000, lookup_p99, "(report)",
                 float("inf"))

    def row2a_git_agent(self):
        agent = self.ensure_agent()
        out = run(["git", "-c", "credential.helper=", "-c", f"credential.helper={self.helper}", "credential", "fill"],
                  input=self.request.read_bytes(), capture_output=True, env=self.agent_env).stdout
        assert b"password=bench-access-token" in out, out
        r = agent.served("row 2a", self.args.runs, lambda: self.hyperfine([
            ("git fill via libsecret", self.fills["libsecret"]),
            ("git fill via tokenctl (agent)", self.fills["tokenctl"]),
        ], shell=True, env=self.agent_env))
        self.add("2a", "`git credential fill` through the agent vs contrib libsecret helper",
                 r["git fill via tokenctl (agent)"]["median"], r["git fill via libsecret"]["median"],
                 f"≤ {GOAL_AGENT_RATIO}", GOAL_AGENT_RATIO)
        r = agent.served("row 2a, get alone", self.args.runs, lambda: self.hyperfine([
            ("libsecret get", self.gets["libsecret"]),
            ("tokenctl get (agent)", self.gets["tokenctl"]),
        ], shell=True, env=self.agent_env))
        self.add("2a", "… helper `get` alone through the agent vs libsecret", r["tokenctl get (agent)"]["median"],
                 r["libsecret get"]["median"], f"≤ {GOAL_AGENT_RATIO}", GOAL_AGENT_RATIO)

    def row4a_race_agent(self):
        agent = self.ensure_agent()
        rounds = 5 if self.args.quick else 10
        walls, requests, failures = [], [], 0
        for _ in range(rounds):
            run([self.prepare])
            # The agent hears of the rewritten item through the Secret Service's signals.
            time.sleep(0.5)
            before = self.stub_admin("/_admin/stats")["token_requests"]
            wall, codes, outputs = agent.served("row 4a", 32, lambda: self.race(
                [self.tokenctl, "token", f"{EXPIRED_TYPE}:expired"], env=self.agent_env))
            requests.append(self.stub_admin("/_admin/stats")["token_requests"] - before)
            walls.append(wall)
            printed = {out for out, _ in outputs}
            self.agent_tokens.update(out.strip() for out in printed if out.strip())
            failures += sum(1 for c in codes if c != 0)
            if len(printed) != 1 or b"expired-access-token\n" in printed:
                failures += 1
                log(f"race through the agent: {len(printed)} different outputs")
        wall = statistics.median(walls)
        counts = f"{min(requests)}" if min(requests) == max(requests) else f"{min(requests)} to {max(requests)}"
        self.add_plain("4a", "32 processes on one expired token through the agent: token-endpoint requests",
                       f"{counts} per round ({rounds} rounds)", "—", "1", set(requests) == {1})
        self.add_plain("4a", "… failures", f"{failures} in {rounds * 32} processes", "—", "0", failures == 0)
        self.add("4a", "… wall time vs one refresh (row 3)", wall, self.single_refresh, "≤ 2.0", 2.0)

    def row6a_memory_agent(self):
        agent = self.ensure_agent()
        self.check_get(self.agent_env)
        runs = 5
        get = agent.served("row 6a", runs, lambda: self.peak_rss(
            [self.helper, "get"], stdin=self.request, env=self.agent_env, runs=runs))
        token = agent.served("row 6a, token", runs, lambda: self.peak_rss(
            [self.tokenctl, "token", f"{TYPE}:ada"], env=self.agent_env, runs=runs))
        libsecret = self.peak_rss([self.libsecret, "get"], stdin=self.request)
        self.add_plain("6a", "peak RSS, `git-credential-tokenctl get` through the agent", f"{get:.1f} MiB",
                       f"libsecret helper {libsecret:.1f} MiB", f"≤ {GOAL_AGENT_CLIENT_RSS_MIB} MiB",
                       get <= GOAL_AGENT_CLIENT_RSS_MIB)
        self.add_plain("6a", "… `tokenctl token` through the agent", f"{token:.1f} MiB", "—", "(report)", None)

    def row8_refresh_ahead(self):
        agent = self.ensure_agent()
        calls, span = (60, 20) if self.args.quick else (200, 60)
        base = self.fresh_stub
        argv = [self.tokenctl, "token", f"{FRESH_TYPE}:fresh"]
        # The first request makes the agent hold the account (refreshing its expired
        # token); from then on the agent keeps it fresh.
        first = run(argv, capture_output=True, check=False, env=self.agent_env)
        if first.returncode != 0 or not first.stdout.strip():
            raise RuntimeError(f"row 8: the first `tokenctl token` through the agent exited {first.returncode}: "
                               f"{first.stderr.decode(errors='replace')[-300:]}")
        before = self.stub_admin("/_admin/stats", base=base)["token_requests"]
        times, inactive, failures = [], 0, 0

        def series():
            nonlocal inactive, failures
            start = time.monotonic()
            for i in range(calls):
                time.sleep(max(0.0, start + i * span / calls - time.monotonic()))
                began = time.perf_counter()
                result = run(argv, capture_output=True, check=False, env=self.agent_env)
                times.append(time.perf_counter() - began)
                token = result.stdout.strip()
                if result.returncode != 0 or not token:
                    failures += 1
                    continue
                self.agent_tokens.add(token)
                answer = self.stub_admin("/introspect", "POST", base=base, form={"token": token.decode()})
                if answer.get("active") is not True:
                    inactive += 1

        agent.served("row 8", calls, series)
        refreshes = self.stub_admin("/_admin/stats", base=base)["token_requests"] - before
        median, slowest = statistics.median(times), max(times)
        self.add(8, f"refresh ahead, {FRESH_LIFETIME} s tokens: slowest of {calls} `tokenctl token` over {span} s "
                 "vs their median", slowest, median, f"≤ {GOAL_SLOWEST_TO_MEDIAN:g}", GOAL_SLOWEST_TO_MEDIAN,
                 note=f"{refreshes} refreshes at the server meanwhile")
        active = calls - failures - inactive
        self.add_plain(8, "… tokens active at the server (RFC 7662 introspection)", f"{active} of {calls}",
                       f"{failures} failed, {inactive} inactive", f"{calls} of {calls}", active == calls)

    def add_agent_rss(self, number, agent, what, baseline, goal, note=""):
        """A row: the agent's RSS now, with its anonymous and file-backed parts, against
        `baseline` MiB."""
        ours = proc_status_kib(agent.pid, "VmRSS") / 1024
        anonymous, file_backed = proc_rss_parts_mib(agent.pid)
        ratio = ours / baseline
        self.rows.append((number, what, ours, baseline, ratio, f"≤ {goal}", ratio <= goal, "MiB",
                          f"anonymous {anonymous:.1f} MiB, file-backed {file_backed:.1f} MiB{note}"))
        self.results[f"{number}: {what}"] = {"ours": ours, "baseline": baseline, "ratio": ratio, "met": ratio <= goal}

    def row20_agent_few_accounts(self):
        # A new agent: the shared one has held other rows' accounts and served their clients.
        self.stop_agent()
        group, count = "bench-few", 10
        now = int(time.time())
        for i in range(count):
            self.store_item(f"few-{i}", f"few{i}", f"f{i}", f"r{i}", now + 3600 + i, group=group, issuer=self.stub)
        agent = self.agent = Agent(self, "few-accounts")
        for i in range(count):
            result = agent.served("row 20", 1, lambda: run(
                [self.tokenctl, "token", "--group", group, f"{TYPE}:few{i}"], capture_output=True, check=False,
                env=self.agent_env))
            if result.returncode != 0 or result.stdout != f"f{i}\n".encode():
                raise RuntimeError(f"row 20: `tokenctl token` of few{i} through the agent failed: {result.stderr!r}")
        time.sleep(5)
        self.keyring_rss = proc_status_kib(keyring_daemon_pid(), "VmRSS") / 1024
        self.add_agent_rss(20, agent, f"the agent idle holding {count} accounts: RSS vs gnome-keyring-daemon's",
                           self.keyring_rss, GOAL_AGENT_TO_KEYRING_RSS)
        self.stop_agent()

    def row9_agent_accounts(self):
        # A new agent: the shared one holds row 8's account, which it refreshes every few
        # seconds, and its peak memory is that of the rows before.
        self.stop_agent()
        agent = self.agent = Agent(self, "accounts")
        group, count = self.list_group, self.list_count
        out = agent.served("row 9, list", 1, lambda: run(
            [self.tokenctl, "list", "--group", group], capture_output=True, env=self.agent_env).stdout.decode())
        assert out.count(TYPE) == count, out[:500]

        def token(i):
            result = run([self.tokenctl, "token", "--group", group, f"{TYPE}:user{i:04}"], capture_output=True,
                         check=False, env=self.agent_env)
            return result.returncode == 0 and result.stdout == f"a{i}\n".encode()

        log(f"asking the agent for each of the {count} accounts")
        with ThreadPoolExecutor(4) as pool:
            answered = agent.served("row 9, token", count, lambda: sum(pool.map(token, range(count))))
        if answered != count:
            raise RuntimeError(f"row 9: {count - answered} of {count} `tokenctl token` through the agent failed")
        status = agent.status()
        held = status.get("held", len(status.get("accounts", [])))
        idle = 20 if self.args.quick else 60
        time.sleep(2)
        before, requests = proc_cpu_ticks(agent.pid), self.stub_admin("/_admin/stats")["token_requests"]
        log(f"agent holding {held} accounts; idle for {idle} s")
        time.sleep(idle)
        ticks = proc_cpu_ticks(agent.pid) - before
        requests = self.stub_admin("/_admin/stats")["token_requests"] - requests
        peak = proc_status_kib(agent.pid, "VmHWM") / 1024
        now = proc_status_kib(agent.pid, "VmRSS") / 1024
        self.add_plain(9, f"the agent holding {held} accounts: peak RSS (VmHWM)", f"{peak:.1f} MiB",
                       f"RSS now {now:.1f} MiB", f"≤ {GOAL_AGENT_RSS_MIB} MiB", peak <= GOAL_AGENT_RSS_MIB)
        milliseconds = ticks * 1000 / os.sysconf("SC_CLK_TCK")
        self.add_plain(9, f"… its CPU time while idle for {idle} s", f"{milliseconds:.0f} ms", "—", "0", ticks == 0,
                       note=f"{requests} token requests meanwhile")
        keyring_now = proc_status_kib(keyring_daemon_pid(), "VmRSS") / 1024
        self.add_agent_rss(9, agent, "… its RSS, idle, vs gnome-keyring-daemon's holding 10 accounts (row 20)",
                           self.keyring_rss, GOAL_AGENT_TO_KEYRING_RSS_1000,
                           note=f"; gnome-keyring-daemon holding these {count} too: {keyring_now:.1f} MiB")
        if "13" in self.args.only.split(","):
            log("row 13")
            self.row13_refreshes_flowing(agent, group, count)
        if "18" in self.args.only.split(","):
            log("row 18")
            self.row18_foreign_writes(agent, held)
        self.stop_agent()

    def import_items(self, prefix, count):
        """Stores `count` items of another program's schema, one `secret-tool store` at a
        time, as an import does; returns the seconds it took."""
        started = time.monotonic()
        for i in range(count):
            run(["secret-tool", "store", "--label", f"imported {prefix}{i}", "xdg:schema", "org.example.Import",
                 "entry", f"{prefix}{i}"], input=f"secret {i}".encode())
        return time.monotonic() - started

    def row18_foreign_writes(self, agent, held):
        """Another program's writes cost an agent that holds none of its items nothing
        (it reads none of them), one look at a time, however fast they come."""
        count = 100 if self.args.quick else 400
        most_threads, slowest_status, sampling = [0], [0.0], [True]
        # What the sampling costs the agent by itself: `agent status` lists every account
        # held, so the writes' own cost is the total less that of the statuses asked.
        statuses = 20
        before = proc_cpu_ticks(agent.pid)
        for _ in range(statuses):
            agent.status()
        per_status = (proc_cpu_ticks(agent.pid) - before) * 1000 / os.sysconf("SC_CLK_TCK") / statuses
        asked = [0]

        def sample():
            while sampling[0]:
                most_threads[0] = max(most_threads[0], len(os.listdir(f"/proc/{agent.pid}/task")))
                started = time.monotonic()
                answered = agent.status() is not None
                asked[0] += 1
                slowest_status[0] = max(slowest_status[0], time.monotonic() - started if answered else float("inf"))
                time.sleep(1)

        before = proc_cpu_ticks(agent.pid)
        with ThreadPoolExecutor(1) as pool:
            sampler = pool.submit(sample)
            with_agent = self.import_items("with-agent-", count)
            # What the writes set off settles within a few seconds (a look a second later).
            time.sleep(3)
            sampling[0] = False
            sampler.result()
        ticks = proc_cpu_ticks(agent.pid) - before
        per_write = ticks * 1000 / os.sysconf("SC_CLK_TCK") / count
        self.stop_agent()
        without_agent = self.import_items("no-agent-", count)
        own = per_write - asked[0] * per_status / count
        self.add_plain(18, f"agent CPU per foreign keyring write, {held} accounts held, {count} writes",
                       f"{per_write:.2f} ms", "—", "≤ 2 ms", per_write <= 2,
                       note=f"most threads {most_threads[0]}, `agent status` asked every second: {asked[0]} "
                            f"of them at {per_status:.1f} ms each; less those, {own:.2f} ms a write")
        self.add(18, f"import of {count} items with the agent running vs without", with_agent, without_agent,
                 "≤ 1.05", 1.05)
        self.add_plain(18, "… the slowest `agent status` during the import", f"{slowest_status[0] * 1000:.0f} ms",
                       "—", "≤ 1000 ms", slowest_status[0] <= 1)

    def row13_refreshes_flowing(self, agent, group, count):
        """The agent holding row 9's accounts while they are refreshed at their
        natural rate (1,000 one-hour tokens: one write every 3.6 s; here one every 2 s, by
        another process, as a direct-path refresh writes), and clients ask for random
        accounts all along: the slowest answers and the agent's memory."""
        span = 20 if self.args.quick else 60
        stop = time.monotonic() + span
        written = []

        def writer():
            # In place, as another process's refresh writes (secret-tool store would add a
            # second item: it replaces only an item whose attributes are all equal).
            out = run([str(ROOT / "Tests/Support/rewrite-items.py"), group, TYPE, str(count), "2", str(span)],
                      capture_output=True).stdout
            written.append(int(out.decode().strip() or 0))

        rss_before = proc_status_kib(agent.pid, "VmRSS") / 1024
        seconds, failures = [], 0
        with ThreadPoolExecutor(1) as pool:
            writing = pool.submit(writer)
            n = 0
            while time.monotonic() < stop:
                i = (n * 7919) % count
                started = time.monotonic()
                result = run([self.tokenctl, "token", "--group", group, f"{TYPE}:user{i:04}"], capture_output=True,
                             check=False, env=self.agent_env)
                seconds.append(time.monotonic() - started)
                if result.returncode != 0 or result.stdout != f"a{i}\n".encode():
                    failures += 1
                n += 1
                time.sleep(0.1)
            writing.result()
        rss_after = proc_status_kib(agent.pid, "VmRSS") / 1024
        seconds.sort()
        p99 = seconds[min(len(seconds) - 1, int(len(seconds) * 0.99))]
        median = statistics.median(seconds)
        self.add_plain(13, f"{count} accounts held, one rewritten every 2 s for {span} s: p99 of "
                       f"{len(seconds)} `tokenctl token` through the agent", f"{p99 * 1000:.1f} ms",
                       f"median {median * 1000:.1f} ms", "≤ 20 ms", p99 <= 0.020,
                       note=f"{sum(written)} items rewritten, {failures} answers wrong or failed")
        self.add_plain(13, "… the agent's RSS before and after", f"{rss_after:.1f} MiB", f"before {rss_before:.1f} MiB",
                       "flat (≤ +10%)", rss_after <= rss_before * 1.1)

    def row10_fallback(self):
        """No agent at the default socket: clients ask, find none, take the direct path."""
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        default = Path(runtime) / "tokenctl" / "agent.sock" if runtime else None
        if default is not None and default.exists():
            raise RuntimeError(f"row 10: {default} exists; it needs no agent at the default socket")
        account = f"{TYPE}:ada"
        r = self.hyperfine([
            ("TOKENCTL_AGENT=0", shlex.join(["env", "TOKENCTL_AGENT=0", self.tokenctl, "token", account])),
            ("no agent", shlex.join(["env", "-u", "TOKENCTL_AGENT", "-u", "TOKENCTL_AGENT_SOCKET", self.tokenctl,
                                     "token", account])),
        ])
        self.add(10, "`tokenctl token` (valid) with no agent running (asks, falls back) vs `TOKENCTL_AGENT=0`",
                 r["no agent"]["median"], r["TOKENCTL_AGENT=0"]["median"], "(report)", float("inf"))

    # MARK: - The table

    def table(self):
        lines = [
            f"Measured {time.strftime('%Y-%m-%d')} on {machine()}; medians of {self.args.runs} runs "
            "(fewer where noted) by hyperfine, ours and its baseline in one invocation; load average "
            f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())} (1 / 5 / 15 min) at the end.",
            "",
            "| # | measure | tokenctl | baseline | ratio | goal | met |",
            "|---|---|---:|---:|---:|---|---|",
        ]
        for number, what, ours, baseline, ratio, goal, met, unit, note in self.rows:
            if unit == "ms":
                ours_text, base_text = f"{ours * 1000:.1f} ms", f"{baseline * 1000:.1f} ms"
            elif unit == "MiB":
                ours_text, base_text = f"{ours:.1f} MiB", f"{baseline:.1f} MiB"
            else:
                ours_text, base_text = str(ours), str(baseline)
            ratio_text = f"{ratio:.2f}" if ratio is not None else "—"
            what_text = what + (f" ({note})" if note else "")
            met_text = "—" if goal == "(report)" else ("yes" if met else "**no**")
            lines.append(f"| {number} | {what_text} | {ours_text} | {base_text} | {ratio_text} | {goal} | {met_text} |")
        if self.notes:
            lines.append("")
            lines += [f"- {note}" for note in self.notes]
        return "\n".join(lines)


def machine():
    try:
        with open("/etc/os-release") as f:
            release = dict(line.rstrip().split("=", 1) for line in f if "=" in line)
        system = release.get("PRETTY_NAME", "Linux").strip('"')
    except OSError:
        system = platform.system()
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.split("\n")[0] \
        if shutil.which("swift") else "Swift (not on PATH)"
    swift = swift.replace("Swift version ", "Swift ").split(" (")[0]
    return f"{system}, {os.cpu_count()} cores, {platform.machine()}, {swift}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=str(ROOT / ".build/release"))
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--quick", action="store_true",
                        help="fewer runs and 200 accounts, row 8 over 20 s and row 9 idle for 20 s, to try the script")
    parser.add_argument("--only", default="1,2,3,4,5,6,7,1a,2a,4a,6a,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--before-bin", help="release binaries from before the agent, for row 10 (rows 1, 2, 2b)")
    parser.add_argument("--before-front-end-bin", help="release binaries from before the front end, for row 14")
    args = parser.parse_args()
    if os.environ.get("TOKENCTL_TEST_KEYRING") != "1":
        sys.exit("bench.py: run inside Tests/Support/with-private-keyring.sh (make bench); it writes to the keyring")
    if args.quick:
        args.runs = min(args.runs, 10)
    bench = Bench(args)
    try:
        bench.start_stub()
        bench.write_type()
        only = set(args.only.split(","))
        # Row 4 needs row 3 (the single refresh), row 6 needs row 2 (the helper and request);
        # the rows through the agent need the items, helpers and figures of the rows they
        # are measured against, and row 9 row 5's accounts.
        needs = {"4": {"3"}, "6": {"1", "2"}, "1a": {"1"}, "10": {"1"}, "21": {"3"}, "11": {"1"}, "2a": {"2"}, "6a": {"2"}, "4a": {"3"},
                 "9": {"5", "20"}, "12": {"1", "2"}, "13": {"9"}, "18": {"9"}, "15": {"1", "2"},
                 "16": {"1", "2"}, "17": {"1", "2"}, "19": {"1"}, "22": {"1"}}
        # Until nothing is added: a row's need may have needs of its own (13 → 9 → 5).
        while any(row in only and not rows <= only for row, rows in needs.items()):
            for row, rows in needs.items():
                if row in only:
                    only |= rows
        if "8" in only:
            bench.write_fresh_type()
        # The direct path first; then the rows through the shared agent, which is stopped
        # before the rest (after row 8 it refreshes a 10-second token all the time); row 9
        # starts an agent of its own.
        steps = [("14", bench.row14_start), ("1", bench.row1_token), ("10", bench.row10_fallback), ("2", bench.row2_git),
                 ("3", bench.row3_expired), ("21", bench.row21_refresh_child), ("4", bench.row4_race), ("6", bench.row6_memory),
                 ("1a", bench.row1a_token_agent), ("2a", bench.row2a_git_agent), ("6a", bench.row6a_memory_agent),
                 ("4a", bench.row4a_race_agent), ("12", bench.row12_peers), ("22", bench.row22_cold_peers),
                 ("15", bench.row15_docker),
                 ("16", bench.row16_cargo), ("17", bench.row17_kube), ("19", bench.row19_forwarded), ("11", bench.row11_dbus), ("8", bench.row8_refresh_ahead),
                 ("-", bench.stop_agent),
                 ("7", bench.row7_browser), ("20", bench.row20_agent_few_accounts), ("5", bench.row5_list),
                 ("9", bench.row9_agent_accounts)]
        for number, step in steps:
            if number == "-":
                step()
            elif number in only:
                log(f"row {number}")
                # One row that cannot run must not cost the others' numbers.
                try:
                    step()
                except Exception as error:  # noqa: BLE001
                    log(f"row {number} failed: {error!r}")
                    text = " ".join(str(error).split())
                    bench.notes.append(f"Row {number} could not run: {type(error).__name__}: {text}"[:400])
        bench.stop_agent()
        for failure in bench.agent_failures:
            bench.notes.append(" ".join(f"The agent did not stop as it must: {failure}".split())[:600])
        table = bench.table()
        print(table)
        if args.json:
            Path(args.json).write_text(json.dumps({"table": table, "results": bench.results}, indent=2))
    finally:
        bench.stop_agent()
        shutil.rmtree(bench.scratch, ignore_errors=True)
    if bench.agent_failures:
        sys.exit("bench.py: the agent did not stop as it must (see the notes above)")


if __name__ == "__main__":
    main()
