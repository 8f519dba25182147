#!/usr/bin/env python3
"""tokenctl's benchmarks (issue 7): `make bench` runs this inside a throw-away keyring.

    Tests/Support/with-private-keyring python3 Tests/Benchmarks/bench.py \
        --bin .build/release [--runs 30] [--quick] [--only 1,2,...] [--json FILE]

Every ratio divides two medians measured in the same run: ours and its baseline are
timed by one hyperfine invocation, on the same keyring items, so machine load hits both.
What each row measures (the issue's numbering):

1. `tokenctl token ACCOUNT` with a valid token stored vs `secret-tool lookup` of that item.
2. `git credential fill` through git-credential-tokenctl vs through git's contrib libsecret
   helper (built here from /usr/share/doc/git/contrib/credential/libsecret), same host,
   same keyring; and the two helpers' `get` alone, without git.
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
   baselines' beside them.
7. A storage miss: git-credential-oauth's browser flow (its only way to get a token) vs
   `tokenctl login`, both through the scripted browser against the real test
   authorization server (django-oauth-toolkit).

The table goes to standard output in Markdown, ready for README's "Performance" section.
"""

import argparse
import json
import os
import platform
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "org.tokenctl.Account"
# The loopback account type of the benchmark, served by the stub authorization server.
TYPE = "benchlocal"
GOAL_RSS_MIB = 15


def log(text):
    print(f"bench: {text}", file=sys.stderr, flush=True)


def run(argv, **kwargs):
    kwargs.setdefault("check", True)
    return subprocess.run(argv, **kwargs)


class Bench:
    def __init__(self, args):
        self.args = args
        self.bin = Path(args.bin).resolve()
        self.tokenctl = str(self.bin / "tokenctl")
        self.helper = str(self.bin / "git-credential-tokenctl")
        self.scratch = Path(tempfile.mkdtemp(prefix="tokenctl-bench-"))
        self.rows = []
        self.notes = []
        self.results = {}
        config_home = Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config"))
        self.types_dir = config_home / "tokenctl" / "types"
        self.config_file = config_home / "tokenctl" / "config.toml"
        # git reads no configuration but what a command line gives it.
        self.git_env = dict(
            os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", GIT_TERMINAL_PROMPT="0")
        os.environ.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", GIT_TERMINAL_PROMPT="0")

    # MARK: - Servers and fixtures

    def start_stub(self):
        state = self.scratch / "stub"
        state.mkdir()
        self.stub_process = subprocess.Popen(
            [str(ROOT / "Tests/Support/stub-oauth-server"), "--state-dir", str(state), "--lifetime", "3600",
             "--watch-pid", str(os.getpid())],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if (state / "stub.json").exists():
                break
            time.sleep(0.05)
        self.stub = json.loads((state / "stub.json").read_text())["base_url"]
        log(f"stub authorization server at {self.stub}")

    def stub_admin(self, path, method="GET"):
        request = urllib.request.Request(self.stub + path, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"{}")

    def write_type(self):
        self.types_dir.mkdir(parents=True, exist_ok=True)
        (self.types_dir / f"{TYPE}.toml").write_text(
            f'id = "{TYPE}"\ndisplay_name = "Benchmark (stub server)"\nissuer = "{self.stub}"\n'
            f'client_id = "bench"\n\n[git]\nhosts = ["127.0.0.1"]\nusername = "oauth2"\n')

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
secret-tool clear xdg:schema {SCHEMA} type {TYPE} account bench-expired group default || true
family=$(curl -sf -X POST {self.stub}/_admin/issue)
refresh=$(printf '%s' "$family" | sed -n 's/.*"refresh_token": *"\\([^"]*\\)".*/\\1/p')
now=$(date +%s)
printf '{{"version":1,"access_token":"expired-access-token","refresh_token":"%s","token_type":"Bearer","expires_at":%d,"issued_at":%d}}' \\
  "$refresh" $((now - 60)) $((now - 3660)) |
  secret-tool store --label "tokenctl: {TYPE} — expired" xdg:schema {SCHEMA} type {TYPE} account bench-expired \\
    group default name expired scopes openid created $now updated $now expires $((now - 60)) refreshable true \\
    issuer {self.stub} client-id bench state ok
""")
        script.chmod(0o755)
        # The baseline: the least a refresh takes from a shell, three programs.
        baseline = self.scratch / "baseline-refresh"
        baseline.write_text(f"""#!/bin/bash
set -euo pipefail
stored=$(secret-tool lookup xdg:schema {SCHEMA} type {TYPE} account bench-expired group default)
[[ $stored =~ \\"refresh_token\\":\\"([^\\"]*)\\" ]]
answer=$(curl -sf -X POST -d grant_type=refresh_token -d client_id=bench --data-urlencode "refresh_token=${{BASH_REMATCH[1]}}" \\
  {self.stub}/token)
[[ $answer =~ \\"access_token\\":\\ *\\"([^\\"]*)\\" ]]; access=${{BASH_REMATCH[1]}}
[[ $answer =~ \\"refresh_token\\":\\ *\\"([^\\"]*)\\" ]]; refresh=${{BASH_REMATCH[1]}}
now=$(date +%s)
printf '{{"version":1,"access_token":"%s","refresh_token":"%s","token_type":"Bearer","expires_at":%d,"issued_at":%d}}' \\
  "$access" "$refresh" $((now + 3600)) $now |
  secret-tool store --label "tokenctl: {TYPE} — expired" xdg:schema {SCHEMA} type {TYPE} account bench-expired \\
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

    def hyperfine(self, commands, runs=None, prepare=None, shell=False, warmup=3):
        """Times `commands` ([(name, command line)]) in one hyperfine run; returns
        {name: {"median": s, "times": [...]}}."""
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
        run(argv, stdout=sys.stderr)
        results = json.loads(export.read_text())["results"]
        return {r["command"]: {"median": r["median"], "times": r["times"]} for r in results}

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
        out = run([self.tokenctl, "token", account], capture_output=True).stdout
        assert out == b"bench-access-token\n", out
        r = self.hyperfine([
            ("secret-tool lookup", shlex.join(self.lookup_argv("bench-oid"))),
            ("tokenctl token", shlex.join([self.tokenctl, "token", account])),
        ])
        self.add(1, "`tokenctl token` (valid) vs `secret-tool lookup`", r["tokenctl token"]["median"],
                 r["secret-tool lookup"]["median"], "≤ 1.0", 1.0)

    def row2_git(self):
        libsecret = self.build_libsecret_helper()
        request = self.scratch / "git-request"
        request.write_text("protocol=http\nhost=127.0.0.1\n\n")
        # The libsecret helper's item: the same credential ours gives, stored through git.
        run(["git", "-c", "credential.helper=", "-c", f"credential.helper={libsecret}", "credential", "approve"],
            input=b"protocol=http\nhost=127.0.0.1\nusername=oauth2\npassword=bench-access-token\n\n",
            env=self.git_env)
        fills = {}
        for name, helper in [("libsecret", libsecret), ("tokenctl", self.helper)]:
            out = run(["git", "-c", "credential.helper=", "-c", f"credential.helper={helper}", "credential", "fill"],
                      input=request.read_bytes(), capture_output=True, env=self.git_env).stdout
            assert b"password=bench-access-token" in out, (name, out)
            fills[name] = (f"git -c credential.helper= -c credential.helper={shlex.quote(helper)} "
                           f"credential fill < {request}")
        r = self.hyperfine([("git fill via libsecret", fills["libsecret"]),
                            ("git fill via tokenctl", fills["tokenctl"])], shell=True)
        self.add(2, "`git credential fill`: tokenctl vs contrib libsecret helper",
                 r["git fill via tokenctl"]["median"], r["git fill via libsecret"]["median"], "≤ 1.0", 1.0)
        # The helpers alone, without git's own start-up diluting the ratio.
        r = self.hyperfine([("libsecret get", f"{shlex.quote(libsecret)} get < {request}"),
                            ("tokenctl get", f"{shlex.quote(self.helper)} get < {request}")], shell=True)
        self.add("2b", "helper `get` alone: tokenctl vs libsecret", r["tokenctl get"]["median"],
                 r["libsecret get"]["median"], "≤ 1.0", 1.0)
        self.libsecret = libsecret
        self.request = request

    def row3_expired(self):
        prepare, baseline = self.write_prepare_script()
        self.prepare = prepare
        run([prepare])
        # The first refresh fetches the discovery document into the cache, as any first use does.
        out = run([self.tokenctl, "token", f"{TYPE}:expired"], capture_output=True).stdout.strip()
        assert out and out != b"expired-access-token", out
        run([prepare])
        out = run([baseline], capture_output=True).stdout.strip()
        assert out and out != b"expired-access-token", out
        before = self.stub_admin("/_admin/stats")["token_requests"]
        runs = max(10, self.args.runs // 2)
        r = self.hyperfine([
            ("lookup + curl + store", baseline),
            ("tokenctl token (expired)", shlex.join([self.tokenctl, "token", f"{TYPE}:expired"])),
        ], runs=runs, prepare=prepare, warmup=2)
        after = self.stub_admin("/_admin/stats")["token_requests"]
        expected = 2 * (runs + 2)
        self.add(3, "expired token: `tokenctl token` vs lookup + curl POST + store",
                 r["tokenctl token (expired)"]["median"], r["lookup + curl + store"]["median"], "≤ 1.2", 1.2,
                 note=f"{after - before} token requests for {expected} runs")
        self.single_refresh = r["tokenctl token (expired)"]["median"]

    def race(self, argv, count=32):
        """Starts `count` copies of argv at once; returns (wall seconds, exit codes, outputs)."""
        start = time.perf_counter()
        processes = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(count)]
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
            wall, codes, outputs = self.race([self.tokenctl, "token", f"{TYPE}:expired"])
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

    def peak_rss(self, argv, stdin=None):
        values = []
        for _ in range(5):
            result = run(["/usr/bin/time", "-f", "%M", *argv], capture_output=True,
                         stdin=open(stdin, "rb") if stdin else subprocess.DEVNULL, env=self.git_env)
            values.append(int(result.stderr.decode().strip().splitlines()[-1]))
        return statistics.median(values) / 1024

    def row6_memory(self):
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
        run([str(ROOT / "Tests/Support/auth-server"), "start", str(state), "--watch-pid", str(os.getpid()),
             "--lifetime", "3600"], stdout=subprocess.DEVNULL)
        server = json.loads((state / "server.json").read_text())
        client = server["clients"]["native"]
        client_id = client["client_id"] if isinstance(client, dict) else client
        browser = str(ROOT / "Tests/Support/scripted-browser")
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
    parser.add_argument("--quick", action="store_true", help="fewer runs and 200 accounts, to try the script")
    parser.add_argument("--only", default="1,2,3,4,5,6,7")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    if os.environ.get("TOKENCTL_TEST_KEYRING") != "1":
        sys.exit("bench.py: run inside Tests/Support/with-private-keyring (make bench); it writes to the keyring")
    if args.quick:
        args.runs = min(args.runs, 10)
    bench = Bench(args)
    try:
        bench.start_stub()
        bench.write_type()
        only = set(args.only.split(","))
        # Row 4 needs row 3 (the single refresh), row 6 needs row 2 (the helper and request).
        if only & {"4"}:
            only.add("3")
        if only & {"6"}:
            only |= {"1", "2"}
        steps = [("1", bench.row1_token), ("2", bench.row2_git), ("3", bench.row3_expired), ("4", bench.row4_race),
                 ("6", bench.row6_memory), ("7", bench.row7_browser), ("5", bench.row5_list)]
        for number, step in steps:
            if number in only:
                log(f"row {number}")
                # One row that cannot run must not cost the others' numbers.
                try:
                    step()
                except Exception as error:  # noqa: BLE001
                    log(f"row {number} failed: {error!r}")
                    bench.notes.append(f"Row {number} could not run: {type(error).__name__}: {error}"[:400])
        table = bench.table()
        print(table)
        if args.json:
            Path(args.json).write_text(json.dumps({"table": table, "results": bench.results}, indent=2))
    finally:
        shutil.rmtree(bench.scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
