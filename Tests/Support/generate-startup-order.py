#!/usr/bin/env python3
"""Writes the link order of the functions a client runs at start (`make startup-order`).

The release executables are 13 MiB of code. A client that starts, asks the agent and exits
runs a few hundred functions spread over all of it, and the kernel maps 64 KiB of file
around every page it faults in: 3.3 MiB of code resident to run a few hundred KiB of it.
lld's --symbol-ordering-file puts the functions named here first, side by side, so the
same run touches a few pages (Makefile, RELEASE_FLAGS; docs/performance.md).

The names come from callgrind, over release binaries without debug information (valgrind
3.19 cannot read lld's): `tokenctl token` answered by an agent (which callgrind's tool is
allowed to ask), by the full program and by the front end, and git's `get` as far as the
front end takes it; then `token` and git's `get` on the direct path (no agent: each asks,
finds none, reads the keyring), and the same with the agent turned off (TOKENCTL_AGENT=0).
The agent's clients come first: the file orders the front end's link too (row 6a).

Run inside a private keyring (Tests/Support/with-private-keyring.sh); usage:
  generate-startup-order.py BIN_DIR OUTPUT
"""

import bisect
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TYPE = "orderlocal"


def callgrind(binary, argv, out, env, stdin=None, check=True):
    subprocess.run(
        ["valgrind", "--tool=callgrind", "--demangle=no", "--compress-strings=no", f"--callgrind-out-file={out}",
         str(binary), *argv],
        env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=check)


def callgrind_tool():
    """The executable a program run under callgrind is to others, as /proc names it (from
    inside, valgrind shows the program's own)."""
    probe = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "sleep", "30"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            found = os.readlink(f"/proc/{probe.pid}/exe")
            if "callgrind" in found:
                return found
            time.sleep(0.1)
        sys.exit(f"callgrind's tool not found: /proc/{probe.pid}/exe is {found}")
    finally:
        probe.kill()
        probe.wait()


def symbols(image):
    """The functions of `image` by address, each as (start, size, names): valgrind names
    some functions by address only (fn=0x...), and lld orders by name."""
    table = {}
    listing = subprocess.run(["nm", "-S", "--defined-only", str(image)], capture_output=True, text=True,
                             check=True).stdout
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in "tTwW":
            start, size = int(fields[0], 16), int(fields[1], 16)
            table.setdefault((start, size), []).append(fields[3])
    return sorted((start, size, names) for (start, size), names in table.items())


def functions(profile, image):
    """The functions of `image` that ran, as the symbol table names them. A function
    valgrind shows by address is named by the symbol whose code holds that address; code
    no symbol holds (LLVM's private functions: .text..L* sections) has no name to order
    by, and the link puts it first anyway (Sources/tokenctl/startup-text.ld)."""
    names, current, table = set(), None, None
    for line in Path(profile).read_text(errors="replace").splitlines():
        if line.startswith("ob="):
            current = line[3:].strip()
        elif line.startswith("fn=") and current == str(image):
            # callgrind marks a recursion level with 'N.
            name = re.sub(r"'\d+$", "", line[3:].strip())
            if re.fullmatch(r"0x[0-9a-f]+", name):
                table = table or symbols(image)
                address = int(name, 16)
                index = bisect.bisect_right(table, (address, float("inf"))) - 1
                if index >= 0 and table[index][0] <= address < table[index][0] + table[index][1]:
                    names.update(table[index][2])
            else:
                names.add(name)
    return names


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    bin_dir, output = Path(sys.argv[1]), Path(sys.argv[2])
    work = Path(tempfile.mkdtemp(prefix="tokenctl-order-"))
    agent = None
    try:
        os.chmod(work, 0o700)
        binaries = {}
        for name in ("tokenctl", "git-credential-tokenctl"):
            binaries[name] = work / name
            subprocess.run(["strip", "--strip-debug", "-o", binaries[name], bin_dir / name], check=True)
        # The front end as installed (Makefile, install): under both its names, with the full
        # program it hands over to in libexec.
        installed = work / "installed"
        (installed / "bin").mkdir(parents=True)
        (installed / "libexec" / "tokenctl").mkdir(parents=True)
        front_end = installed / "bin" / "tokenctl"
        subprocess.run(["strip", "--strip-debug", "-o", front_end, bin_dir / "tokenctl-front-end"], check=True)
        os.link(front_end, installed / "bin" / "git-credential-tokenctl")
        shutil.copy(binaries["tokenctl"], installed / "libexec" / "tokenctl" / "tokenctl")
        types = work / "config" / "tokenctl" / "types"
        types.mkdir(parents=True)
        (types / f"{TYPE}.toml").write_text(
            f'id = "{TYPE}"\ndisplay_name = "Link order"\nissuer = "http://127.0.0.1:9"\nclient_id = "order"\n\n'
            '[git]\nhosts = ["127.0.0.1"]\nusername = "oauth2"\n')
        (types / f"{TYPE}.toml").chmod(0o600)
        now = int(time.time())
        secret = {"version": 1, "access_token": "order-access-token", "token_type": "Bearer",
                  "expires_at": now + 86400, "issued_at": now, "refresh_token": "order-refresh-token"}
        subprocess.run(
            ["secret-tool", "store", "--label", f"tokenctl: {TYPE} — ada", "xdg:schema", "org.tokenctl.Account",
             "type", TYPE, "account", "order-oid", "group", "default", "name", "ada", "scopes", "openid",
             "created", str(now), "updated", str(now), "expires", str(now + 86400), "refreshable", "true",
             "client-id", "order", "state", "ok", "issuer", "http://127.0.0.1:9"],
            input=json.dumps(secret).encode(), check=True)
        env = dict(os.environ, XDG_CONFIG_HOME=str(work / "config"), TOKENCTL_AGENT_SOCKET=str(work / "agent.sock"))
        env.pop("TOKENCTL_AGENT", None)
        request = work / "request"
        request.write_text("protocol=https\nhost=127.0.0.1\n\n")
        token = ["token", f"{TYPE}:ada"]

        agent = subprocess.Popen([binaries["tokenctl"], "agent", "run"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if (work / "agent.sock").exists():
                break
            time.sleep(0.1)
        answer = subprocess.run([binaries["tokenctl"], *token], env=env, capture_output=True, check=True).stdout
        assert answer == b"order-access-token\n", answer
        # Under callgrind the client is valgrind's tool to the agent, not tokenctl's own
        # program: an application like any other, which must be allowed the account.
        subprocess.run([binaries["tokenctl"], "allow", callgrind_tool(), f"{TYPE}:ada"], env=env,
                       capture_output=True, check=True)
        callgrind(binaries["tokenctl"], token, work / "agent-token", env)
        callgrind(front_end, token, work / "front-end-token", env)
        # git's `get` through the agent: the agent answers it to tokenctl's own programs only,
        # which callgrind's tool is not, so the front end hands the refusal over to the full
        # program (which callgrind does not follow); its own start and asking are the same.
        with open(request, "rb") as stdin:
            callgrind(installed / "bin" / "git-credential-tokenctl", ["get"], work / "front-end-get", env, stdin,
                      check=False)
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)
        agent = None
        # The direct path both ways a user has it: no agent running (asked, none found), and
        # the agent turned off (TOKENCTL_AGENT=0, as bench rows 1-7 run it).
        off = dict(env, TOKENCTL_AGENT="0")
        direct = []
        for label, environment in (("direct", env), ("off", off)):
            callgrind(binaries["tokenctl"], token, work / f"{label}-token", environment)
            with open(request, "rb") as stdin:
                callgrind(binaries["git-credential-tokenctl"], ["get"], work / f"{label}-get", environment, stdin)
            direct += [(work / f"{label}-token", binaries["tokenctl"]),
                       (work / f"{label}-get", binaries["git-credential-tokenctl"])]

        first = functions(work / "agent-token", binaries["tokenctl"]) | functions(
            work / "front-end-token", front_end) | functions(
            work / "front-end-get", installed / "bin" / "git-credential-tokenctl")
        rest = set().union(*(functions(profile, image) for profile, image in direct)) - first
        if len(first) < 100:
            sys.exit(f"only {len(first)} functions ran on the agent's path: was it the agent that answered?")
        lines = [
            "# The functions `tokenctl token` and git's `get` run at start, first those an agent's",
            "# answer needs, then the direct path's: lld's --symbol-ordering-file (Makefile,",
            "# RELEASE_FLAGS). Generated by `make startup-order`; do not edit.",
            f"# {len(first)} + {len(rest)} functions.",
            *sorted(first), *sorted(rest)]
        output.write_text("\n".join(lines) + "\n")
        print(f"{output}: {len(first)} functions on the agent's path, {len(rest)} more on the direct path")
    finally:
        if agent is not None:
            agent.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
