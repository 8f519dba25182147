#!/usr/bin/env python3
"""Types a command line and a TAB into an interactive bash, zsh or fish on a pseudo-terminal,
with a completion script sourced, and reports what the shell's own line editor made of
it: the candidates the completion function offered and the line after the TAB.

    complete-interactively.py --shell bash|zsh|fish --script FILE -- LINE

Prints JSON: {"candidates": [...], "line": "..."}. The shell runs with this script's
environment (PATH must find the program the script completes), without the user's or
the system's start-up files. Readline and ZLE do the word splitting, quoting and
insertion themselves, which calling the completion functions by hand would skip.

bash: the function the script registers (`complete -p`) is wrapped to write COMPREPLY
to a file. zsh: `compadd` is wrapped to write the matches it adds. fish: the script's
`__tokenctl_custom_completion` is wrapped to write what tokenctl answered (fish's own
`complete -C` cannot stand in: fish 3 gives it no cursor, which the script passes on).
Then a key bound to a shell function writes the line (READLINE_LINE, BUFFER,
`commandline`), which also tells that the TAB has been handled. Fails after 20 s.
"""

import argparse
import json
import os
import pty
import select
import shutil
import signal
import sys
import tempfile
import time

PROMPT = "READY> "

BASH_RC = r"""
PS1='READY> '
bind 'set bell-style none'
source "$COMPLETE_SCRIPT"
__complete_wrapped=$(complete -p tokenctl | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
eval "__complete_capture() {
    $__complete_wrapped \"\$@\"
    printf '%s\0' \"\${COMPREPLY[@]}\" > \"\$COMPLETE_OUT/candidates\"
}"
complete -o filenames -F __complete_capture tokenctl
bind -x '"\C-x\C-l": printf "%s" "$READLINE_LINE" > "$COMPLETE_OUT/line"'
"""

ZSH_RC = r"""
PS1='READY> '
unsetopt beep
autoload -Uz compinit && compinit -u -D
source "$COMPLETE_SCRIPT"
: > "$COMPLETE_OUT/candidates"
compadd() {
    # The calls that only compute (-O, -A, -D) are passed on untouched.
    if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
        builtin compadd "$@"
        return
    fi
    local -a __complete_hits
    builtin compadd -A __complete_hits "$@"
    (( ${#__complete_hits} )) && printf '%s\0' "${__complete_hits[@]}" >> "$COMPLETE_OUT/candidates"
    builtin compadd "$@"
}
__complete_dump_line() { print -rn -- "$BUFFER" > "$COMPLETE_OUT/line" }
zle -N __complete_dump_line
bindkey '^X^L' __complete_dump_line
"""

FISH_RC = r"""
function fish_prompt; echo -n 'READY> '; end
set -g fish_autosuggestion_enabled 0
source $COMPLETE_SCRIPT
functions --copy __tokenctl_custom_completion __complete_wrapped
function __tokenctl_custom_completion
    set -l found (__complete_wrapped $argv)
    printf '%s\0' $found >> $COMPLETE_OUT/candidates
    printf '%s\n' $found
end
bind \cx\cl 'commandline | string collect -N > $COMPLETE_OUT/line'
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shell", choices=["bash", "zsh", "fish"], required=True)
    parser.add_argument("--script", required=True)
    parser.add_argument("line", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    line = args.line[1:] if args.line[:1] == ["--"] else args.line
    if len(line) != 1:
        parser.error("give one command line")
    scratch = tempfile.mkdtemp(prefix="complete-interactively.")
    try:
        print(json.dumps(run(args.shell, os.path.abspath(args.script), line[0], scratch)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run(shell, script, line, scratch):
    environment = dict(os.environ, COMPLETE_SCRIPT=script, COMPLETE_OUT=scratch, TERM="xterm")
    if shell == "bash":
        rc = os.path.join(scratch, "bashrc")
        with open(rc, "w") as f:
            f.write(BASH_RC)
        command = ["bash", "--noprofile", "--rcfile", rc, "-i"]
    elif shell == "zsh":
        with open(os.path.join(scratch, ".zshrc"), "w") as f:
            f.write(ZSH_RC)
        environment["ZDOTDIR"] = scratch
        command = ["zsh", "-d", "-i"]
    else:
        rc = os.path.join(scratch, "config.fish")
        with open(rc, "w") as f:
            f.write(FISH_RC)
        command = ["fish", "--no-config", "-i", "-C", f"source {rc}"]
    pid, terminal = pty.fork()
    if pid == 0:
        os.execvpe(command[0], command, environment)
    transcript = b""
    deadline = time.monotonic() + 20

    def read_until(done):
        nonlocal transcript
        while not done():
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out; the terminal showed: {transcript[-2000:]!r}")
            ready, _, _ = select.select([terminal], [], [], 0.05)
            if ready:
                try:
                    transcript += os.read(terminal, 65536)
                except OSError:
                    raise SystemExit(f"the shell ended; the terminal showed: {transcript[-2000:]!r}")

    line_file = os.path.join(scratch, "line")
    try:
        read_until(lambda: PROMPT.encode() in transcript)
        os.write(terminal, line.encode() + b"\t")
        os.write(terminal, b"\x18\x0c")
        read_until(lambda: os.path.exists(line_file) and os.path.getsize(line_file) > 0)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(terminal)
    candidates_file = os.path.join(scratch, "candidates")
    candidates = []
    if os.path.exists(candidates_file):
        with open(candidates_file, "rb") as f:
            candidates = [c.decode() for c in f.read().split(b"\0") if c]
    with open(line_file, "rb") as f:
        line = f.read().decode()
    return {"candidates": candidates, "line": line.removesuffix("\n") if shell == "fish" else line}


if __name__ == "__main__":
    sys.exit(main())
