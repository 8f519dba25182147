#!/usr/bin/env bash
# Runs a command with a tokenctl agent serving it, so that the integration suites can run
# their clients through the agent as well as directly:
#
#   Tests/Support/with-private-keyring.sh Tests/Support/with-agent.sh swift test --skip-build --filter Integration
#
# Starts `tokenctl agent run` (TOKENCTL_BIN, else .build/debug/tokenctl) on a socket of its
# own, exports TOKENCTL_AGENT_SOCKET so that every client the command starts asks it first,
# and TOKENCTL_TEST_AGENT=1 so that the tests know (a private session bus starts an agent of
# its own then). Inside with-private-keyring.sh, so that the agent is on the tests' bus: it
# leaves a client of another bus to its direct path. Afterwards it prints the agent's
# status (its request counter says whether it served) and stops it. The agent's log goes
# to TOKENCTL_AGENT_LOG when set, else it is printed when the agent misbehaved.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tokenctl=${TOKENCTL_BIN:-$root/.build/debug/tokenctl}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tokenctl-agent.XXXXXX")
# The agent refuses a socket folder others may enter.
mkdir -m 700 "$scratch/agent"
export TOKENCTL_AGENT_SOCKET="$scratch/agent/agent.sock"
log=${TOKENCTL_AGENT_LOG:-$scratch/agent.log}

"$tokenctl" agent run </dev/null >"$log" 2>&1 &
agent=$!
stop() {
  if kill -0 "$agent" 2>/dev/null; then
    kill -TERM "$agent"
    # Bounded: an agent that ignores SIGTERM is killed after 10 s.
    for _ in $(seq 100); do kill -0 "$agent" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$agent" 2>/dev/null || true
  fi
  wait "$agent" 2>/dev/null || true
  rm -rf "$scratch"
}
trap stop EXIT

for _ in $(seq 100); do
  "$tokenctl" agent status >/dev/null 2>&1 && break
  if ! kill -0 "$agent" 2>/dev/null; then
    echo "with-agent.sh: the agent exited at once:" >&2
    cat "$log" >&2
    exit 1
  fi
  sleep 0.1
done

export TOKENCTL_TEST_AGENT=1
status=0
"$@" || status=$?

if ! "$tokenctl" agent status >&2; then
  echo "with-agent.sh: the agent is gone; its log:" >&2
  cat "$log" >&2
  status=1
fi
exit "$status"
