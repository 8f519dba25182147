#!/usr/bin/env bash
# `make install` into a scratch folder (DESTDIR, PREFIX=/usr), then runs what it installed
# as a user would, in a throw-away keyring on a private bus, with an agent of its own:
# - bin/tokenctl, bin/git-credential-tokenctl and bin/docker-credential-tokenctl are the
#   front end (one file, static), libexec/tokenctl/tokenctl is the full program and
#   libexec/tokenctl/tokenctl-agent the agent;
# - the front end hands a command it does not take (--version, list) to the full program;
# - `tokenctl token` of an account nobody has, through the agent: the full program's error
#   and exit status 2, and the agent asked once;
# - git's helper under its own name answers a host nobody serves with nothing, exit 0;
# - the agent, started as the units start it (bin/tokenctl agent run), runs the agent's own
#   executable;
# - the agent's socket unit is enabled for every user session (sockets.target.wants).
# Exits 1 on the first failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tokenctl-install.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
fail() { echo "check-install.sh: $*" >&2; exit 1; }

make --no-print-directory install DESTDIR="$scratch/root" PREFIX=/usr >"$scratch/install.log" 2>&1 \
  || { cat "$scratch/install.log"; fail "make install failed"; }
bin=$scratch/root/usr/bin
full=$scratch/root/usr/libexec/tokenctl/tokenctl
[ -x "$full" ] || fail "no full program at usr/libexec/tokenctl/tokenctl"
[ -x "${full%/*}/tokenctl-agent" ] || fail "no agent at usr/libexec/tokenctl/tokenctl-agent"
for name in tokenctl git-credential-tokenctl docker-credential-tokenctl; do
  [ "$bin/$name" -ef "$bin/tokenctl" ] || fail "bin/$name is not the front end"
done
readelf -lW "$bin/tokenctl" | grep -q INTERP && fail "bin/tokenctl is not static"
wants=$scratch/root/usr/lib/systemd/user/sockets.target.wants/tokenctl-agent.socket
[ "$(readlink "$wants")" = ../tokenctl-agent.socket ] && [ -f "$wants" ] \
  || fail "tokenctl-agent.socket is not enabled for user sessions ($wants)"

version=$("$bin/tokenctl" --version) || fail "tokenctl --version failed"
[ "$version" = "$("$full" --version)" ] || fail "the front end's --version is not the full program's: $version"

mkdir -m 700 "$scratch/agent"
export TOKENCTL_AGENT_SOCKET=$scratch/agent/agent.sock HOME=$scratch/home XDG_CONFIG_HOME=$scratch/home/.config
mkdir -p "$HOME"
Tests/Support/with-private-keyring.sh bash -euo pipefail -c '
  bin=$1 full=$2 scratch=$3
  fail() { echo "check-install.sh: $*" >&2; exit 1; }
  "$bin/tokenctl" agent run </dev/null >"$scratch/agent.log" 2>&1 &
  agent=$!
  trap "kill $agent 2>/dev/null || true" EXIT
  for _ in $(seq 100); do "$bin/tokenctl" agent status >/dev/null 2>&1 && break; sleep 0.1; done
  [ "$(readlink "/proc/$agent/exe")" -ef "$(dirname "$full")/tokenctl-agent" ] \
    || fail "the agent does not run libexec/tokenctl/tokenctl-agent"
  requests() { "$bin/tokenctl" agent status | sed -n "s/.* \([0-9]*\) requests.*/\1/p"; }
  before=$(requests)
  status=0
  "$bin/tokenctl" token nobody >"$scratch/out" 2>"$scratch/err" || status=$?
  after=$(requests)
  [ "$status" = 2 ] || fail "token nobody: exit $status, not 2: $(cat "$scratch/err")"
  grep -q "no account .nobody." "$scratch/err" || fail "token nobody: $(cat "$scratch/err")"
  # The status call itself is a request.
  [ $((after - before)) = 2 ] || fail "the agent was asked $((after - before - 1)) times for one token"
  answer=$(printf "protocol=https\nhost=nobody.example\n\n" | "$bin/git-credential-tokenctl" get) \
    || fail "git-credential-tokenctl get failed"
  [ -z "$answer" ] || fail "git-credential-tokenctl get answered a host nobody serves: $answer"
  "$bin/tokenctl" list >/dev/null 2>&1 || fail "tokenctl list failed"
' check-install.sh "$bin" "$full" "$scratch"
echo "check-install.sh: ok (front end in bin under three names, full program in libexec, agent)"
