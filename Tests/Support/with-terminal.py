#!/usr/bin/env python3
"""Runs a command with a pseudo-terminal as its controlling terminal, as if a person sat
at it, while its standard streams stay those of this script (pipes, in the tests).

    with-terminal.py --transcript FILE [--answer LINE]... -- COMMAND [ARG]...

Each --answer is typed at the terminal, in order, once the command first writes to it:
what a program reads from /dev/tty. Everything the command writes to /dev/tty goes to
FILE. Exits with the command's status (128 + N when killed by signal N), after at most
120 s, when the command is killed.
"""

import argparse
import os
import select
import signal
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--transcript", required=True)
    parser.add_argument("--answer", action="append", default=[])
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    primary, secondary = os.openpty()
    pid = os.fork()
    if pid == 0:
        os.close(primary)
        os.setsid()
        # Opening a terminal as a session leader without one makes it the controlling one.
        os.close(os.open(os.ttyname(secondary), os.O_RDWR))
        os.close(secondary)
        os.execvp(command[0], command)
    os.close(secondary)
    transcript = b""
    answers = [(line + "\n").encode() for line in args.answer]
    deadline = time.monotonic() + 120
    status = None
    while status is None:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
        ready, _, _ = select.select([primary], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(primary, 4096)
            except OSError:
                chunk = b""
            transcript += chunk
            if chunk and answers:
                os.write(primary, answers.pop(0))
        finished, code = os.waitpid(pid, os.WNOHANG)
        if finished:
            status = os.waitstatus_to_exitcode(code)
    while select.select([primary], [], [], 0)[0]:
        try:
            chunk = os.read(primary, 4096)
        except OSError:
            break
        if not chunk:
            break
        transcript += chunk
    with open(args.transcript, "wb") as handle:
        handle.write(transcript)
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
