#!/usr/bin/env python3
"""Prints the hardening table from the figures the hardening checks left in SUMMARY.

    report.py SUMMARY

SUMMARY holds tab-separated lines: "crash NAME VALUE" (Tests/Hardening/crash-harness.py),
"fault COMMAND FAULT pass|fail" (FaultMatrixTests), "grant PATH FAULT LOST ROUNDS"
(GrantJournalTests), "journal PATH DAMAGE DEAD ASKS" and "journal-unwritable PATH
pass|fail" (GrantJournalFaultTests), "keyring CASE pass|fail" and
"listener CASE pass|fail" (KeyringFaultTests, KeyringCommandTests,
SignInIntegrationTests), "leak NAME VALUE" (SecretHygieneTests), "agent-stopped CASE SECONDS pass|fail" and
"agent-silent CASE SECONDS pass|fail" (AgentIntegrationTests' bounded waits),
"server-recovery CASE SECONDS pass|fail" (ServerRecoveryTests), and "fuzz TARGET
EXECUTIONS CRASHES" (Tests/Fuzz), "freshness WHAT DEAD REFRESHES" (FreshnessTests, make
hardening only). Prints a Markdown table, then exits 1 when any figure
is a failure: a token or grant lost, an account needing sign-in, a failed case, a leak, a crash,
or a check that left no figure at all.
"""

import collections
import platform
import sys
import time


def main():
    rows = collections.defaultdict(list)
    with open(sys.argv[1], encoding="utf-8") as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            if len(fields) >= 3:
                rows[fields[0]].append(fields[1:])
    problems = []
    table = []

    crash = {name: value for name, value in rows["crash"]}
    if crash:
        lost, sign_in = int(crash.get("tokens_lost", -1)), int(crash.get("needs_sign_in", -1))
        table.append(("Crash safety: SIGKILL during a refresh (`tokenctl token`, git helper `get`)",
                      "%s kills (%s after the request reached the server); tokens lost: %d; accounts needing "
                      "sign-in: %d; refresh median %s ms" % (crash.get("kills"), crash.get("kills_after_request"),
                                                             lost, sign_in, crash.get("refresh_median_ms"))))
        if lost != 0 or sign_in != 0:
            problems.append("crash: tokens lost or accounts needing sign-in")
    else:
        problems.append("crash: no figures")

    def cases(kind, title):
        results = rows[kind]
        passed = sum(1 for fields in results if fields[-1] == "pass")
        failed = [" × ".join(fields[:-1]) for fields in results if fields[-1] != "pass"]
        if not results:
            problems.append("%s: no figures" % kind)
        if failed:
            problems.append("%s failed: %s" % (kind, ", ".join(failed)))
        detail = "%d tried, %d passed" % (len(results), passed)
        if kind == "fault" and results:
            commands = sorted({fields[0] for fields in results})
            faults = sorted({fields[1] for fields in results})
            detail += " (%d faults × %s)" % (len(faults), ", ".join(commands))
        if kind in ("keyring", "listener") and results:
            detail += ": " + ", ".join(fields[0] for fields in results)
        table.append((title, detail))

    # GrantJournalTests: "grant PATH FAULT LOST ROUNDS", one line per path and fault.
    grants = [f for f in rows["grant"] if len(f) >= 4]
    for path, fault, lost, tried in grants:
        table.append(("Grants lost, %s between the server's answer and the keyring write (%s)" % (fault, path),
                      "%s of %s" % (lost, tried)))
        if lost != "0":
            problems.append("grant: %s of %s lost to %s (%s)" % (lost, tried, fault, path))
    if not grants:
        problems.append("grant: no figures")

    # GrantJournalFaultTests: "journal PATH DAMAGE DEAD ASKS", one line per path and damage
    # done to an entry; "journal-unwritable PATH pass|fail", a full tmpfs, as root only.
    damaged = [f for f in rows["journal"] if len(f) >= 4]
    if damaged:
        dead = sum(int(f[2]) if f[2].isdigit() else 1 for f in damaged)
        asks = sum(int(f[3]) if f[3].isdigit() else 0 for f in damaged)
        table.append(("Dead tokens handed out after a journal fault (an entry %s; %s)" % (
            ", ".join(dict.fromkeys(f[1] for f in damaged)), ", ".join(dict.fromkeys(f[0] for f in damaged))),
            "%d of %d asks" % (dead, asks)))
        if dead != 0:
            problems.append("journal: %d dead tokens handed out after a journal fault" % dead)
    else:
        problems.append("journal: no figures")
    unwritable = rows["journal-unwritable"]
    if unwritable:
        failed = [f[0] for f in unwritable if f[-1] != "pass"]
        table.append(("A journal that cannot be written (its tmpfs full) is reported: once per command on "
                      "standard error, once in the agent's log",
                      "%d of %d paths (%s)" % (len(unwritable) - len(failed), len(unwritable),
                                               ", ".join(f[0] for f in unwritable))))
        if failed:
            problems.append("journal-unwritable failed: %s" % ", ".join(failed))
    else:
        problems.append("journal-unwritable: no figures (mounting a small tmpfs needs root)")

    # AgentIntegrationTests' bounded waits: "agent-stopped CASE SECONDS pass|fail" and
    # "agent-silent CASE SECONDS pass|fail", one line per case and client.
    def waits(kind, title):
        results = [f for f in rows[kind] if len(f) >= 3]
        if not results:
            problems.append("%s: no figures" % kind)
            return
        failed = [f[0] for f in results if f[-1] != "pass"]
        table.append((title, "; ".join("%s: %s s" % (f[0], f[1]) for f in results)))
        if failed:
            problems.append("%s failed: %s" % (kind, ", ".join(failed)))

    waits("agent-stopped", "No client waits past 3 s for a stopped agent (the direct path answers)")
    waits("agent-silent", "A client of an agent silent mid-refresh says so after 5 s without a word (exit 19)")
    waits("server-recovery", "After a server's outage, the first token within 5 s of its return (seconds late)")

    cases("fault", "Server faults, each with a clear message, a documented exit status, tokens kept")
    cases("keyring", "Keyring faults")
    cases("listener", "Loopback listener attacks")

    leak = {name: value for name, value in rows["leak"]}
    if leak:
        findings = int(leak.get("findings", -1))
        table.append(("Secret scan: output, debug log, browser and hook argv and environment, keyring "
                      "attributes and labels, file modes",
                      "%s commands, %s secrets looked for, %d findings" % (
                          leak.get("commands"), leak.get("secrets looked for"), findings)))
        if findings != 0:
            problems.append("leak: %d findings" % findings)
    else:
        problems.append("leak: no figures")

    fuzz = rows["fuzz"]
    for target, executions, crashes in ((f[0], f[1], f[2]) for f in fuzz if len(f) >= 3):
        table.append(("Fuzzing (libFuzzer): %s" % target, "%s executions, %s crashes" % (
            "{:,}".format(int(executions)) if executions.isdigit() else executions, crashes)))
        if crashes != "0":
            problems.append("fuzz %s: %s crashes" % (target, crashes))
    if not fuzz:
        table.append(("Fuzzing (libFuzzer)", "not run"))
        problems.append("fuzz: no figures")

    # FreshnessTests' soak, in `make hardening` only (TOKENCTL_SOAK=1): absent from `make test`.
    for what, dead, refreshes in ((f[0], f[1], f[2]) for f in rows["freshness"] if len(f) >= 3):
        table.append(("Freshness: %s" % what, "%s (%s)" % (dead, refreshes)))
        if any(part.strip() not in ("0", "") for part in dead.strip("[]").split(",")):
            problems.append("freshness: dead tokens handed out %s" % dead)

    print("Hardening, %s, %s %s, %d cores" % (time.strftime("%Y-%m-%d"), platform.system(), platform.machine(),
                                               __import__("os").cpu_count()))
    print()
    print("| Check | Result |")
    print("|---|---|")
    for check, result in table:
        print("| %s | %s |" % (check, result))
    if problems:
        print("\nFAILED: " + "; ".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
