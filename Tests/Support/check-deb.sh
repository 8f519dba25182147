#!/usr/bin/env bash
# The Debian packages as a user gets them (`make check-deb`, docs/packaging.md):
# - `make deb` builds tokenctl, tokenctl-dbgsym and python3-keyring-tokenctl, and lintian
#   finds no error and no warning in them;
# - a second build, version N+1, is the same checkout with a scratch copy of debian/ whose
#   changelog has one more entry, mounted over debian/ in a private mount namespace (so
#   the Swift build is the one already made, and the checkout is not touched);
# - `apt-get install` of version N starts no agent and enables the socket for user
#   sessions the Debian way (/etc/systemd/user, through deb-systemd-helper);
# - a fresh user, in a bubblewrap sandbox where /opt/swift is empty and swift is not on
#   PATH, with a throw-away keyring on a private session bus (with-private-keyring.sh):
#   signs in at the test provider, gets the token through the agent that D-Bus activation
#   starts from the installed service file, clones with real git through the installed
#   helper, reads `man tokenctl`, completes `tokenctl lo<TAB>` in bash, and finds the
#   keyring backend registered with Python's keyring;
# - version N+1 installed over N while that user's agent runs: the same token comes out,
#   by the direct path and on D-Bus with the consent given before, from a new agent;
# - `apt-get remove` leaves no agent running, and `purge` no file of either package.
# Runs as root; removes what it installed, and the user it made, also when it fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
fail() { echo "check-deb: $*" >&2; exit 1; }
say() { echo "check-deb: $*"; }
program=/usr/libexec/tokenctl/tokenctl
# The agent's own executable, which `tokenctl agent run` runs in its place.
agent_program=/usr/libexec/tokenctl/tokenctl-agent
packages=(tokenctl python3-keyring-tokenctl)

# The user's side, run by the root side below as the fresh user, in the sandbox:
#   check-deb.sh --user SYNC_DIR PROVIDER_DIR
# PROVIDER_DIR is the state folder of the test provider (Tests/Support/auth-server.sh), which
# the root side runs.
# Steps with the root side through files in SYNC_DIR: it writes `signed-in` and waits for
# `upgraded`, then writes `checked` and waits for `removed`.
if [ "${1:-}" = --user ]; then
  sync=$2
  await() { for _ in $(seq 1800); do [ -e "$sync/$1" ] && return 0; sleep 0.1; done; fail "waited 3 minutes for $1"; }
  [ ! -r /opt/swift/usr/bin ] && ! command -v swift >/dev/null || fail "the Swift toolchain is visible to the user"
  [ "$(command -v tokenctl)" = /usr/bin/tokenctl ] || fail "tokenctl on PATH is $(command -v tokenctl)"
  provider=$3
  state=$(mktemp -d)
  support=$root/Tests/Support
  json() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))
for k in sys.argv[2:]: v=v[k]
print(v)' "$@"; }
  issuer=$(json "$provider/server.json" issuer)

  # A git server that takes only tokens the provider calls active.
  mkdir -p "$state/repositories" "$state/git"
  git init -q -b main "$state/seed"
  git -C "$state/seed" -c user.name=Ada -c user.email=ada@example.org commit -q --allow-empty -m "first commit"
  git clone -q --bare "$state/seed" "$state/repositories/project.git"
  client="$(json "$provider/server.json" clients service client_id):$(json "$provider/server.json" clients service client_secret)"
  "$support/git-http-server.py" --state-dir "$state/git" --root "$state/repositories" \
    --introspect "$(json "$provider/server.json" endpoints introspection)" --introspect-client "$client" \
    --watch-pid $$ --lifetime 900 &
  for _ in $(seq 100); do [ -s "$state/git/git-server.json" ] && break; sleep 0.1; done
  remote=$(json "$state/git/git-server.json" base_url)
  host=${remote#http://}

  mkdir -p "$XDG_CONFIG_HOME/tokenctl/types"
  # The demo's type (Tests/Support/forge-type.toml.in), for the git server alone.
  sed -e "s|@ISSUER@|$issuer|" -e "s|@HOSTS@|\"$host\"|" "$support/forge-type.toml.in" \
    >"$XDG_CONFIG_HOME/tokenctl/types/forge.toml"
  # The scripted user's browser needs only Python's standard library: Debian's Python runs
  # it (the test provider's environment may be built on a Python the user cannot read).
  printf '#!/bin/sh\nexec /usr/bin/python3 %s "$@"\n' "$root/Tests/AuthServer/scripted_browser.py" >"$state/browser"
  chmod 755 "$state/browser"
  export BROWSER=$state/browser SCRIPTED_BROWSER_SERVER_JSON=$provider/server.json
  export SCRIPTED_BROWSER_LOG=$state/browser.log DISPLAY=:check-deb
  tokenctl login forge >"$state/login.log" 2>&1 || { cat "$state/login.log"; fail "tokenctl login forge failed"; }
  token=$(tokenctl token forge:ada) || fail "tokenctl token forge:ada failed"
  say "signed in as forge:ada at the test provider; a token of ${#token} characters"

  # D-Bus activation: nothing runs the agent but dbus-daemon, from the installed
  # /usr/share/dbus-1/services/org.tokenctl.Agent.service.
  # The agent's pid, from the agent itself: it makes itself non-dumpable, so even its own
  # user cannot read its /proc entries (the root side checks what it runs).
  agent_pid() { tokenctl agent status --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin).get("pid", ""))'; }
  # A client may have started an agent of its own (tokenctl-agent(1)): stopped, so that
  # the one that answers next is the one D-Bus activation starts.
  # One the client started a moment ago may not answer yet (agent stop then finds none):
  # asked again until none answers, for up to 10 s.
  for _ in $(seq 50); do
    tokenctl agent stop >/dev/null 2>&1 || true
    [ -z "$(agent_pid)" ] && break
    sleep 0.2
  done
  [ -z "$(agent_pid)" ] || fail "tokenctl agent stop left an agent running"
  tokenctl allow gdbus forge:ada >/dev/null || fail "tokenctl allow gdbus forge:ada failed"
  dbus_token() {
    gdbus call --session --dest org.tokenctl.Agent --object-path /org/tokenctl/Agent \
      --method org.tokenctl.Agent1.GetAccessToken '' forge:ada 60 |
      sed -n "s/^('\\([^']*\\)', .*/\\1/p"
  }
  [ "$(dbus_token)" = "$token" ] || fail "the D-Bus-activated agent did not hand out the account's token"
  first_agent=$(agent_pid)
  [ -n "$first_agent" ] || fail "no agent answers on its socket after a D-Bus call"
  say "GetAccessToken on D-Bus started the agent (pid $first_agent) and answered with the same token"

  # git, through the installed helper, configured as the README says.
  export GIT_CONFIG_GLOBAL=$state/gitconfig GIT_TERMINAL_PROMPT=0
  tokenctl setup-git --host "$host" >/dev/null || fail "tokenctl setup-git failed"
  git clone -q "$remote/project.git" "$state/clone" || fail "git clone through git-credential-tokenctl failed"
  [ "$(git -C "$state/clone" log --format=%s)" = "first commit" ] || fail "the clone has not the server's commit"
  say "git clone $remote/project.git through the installed helper"

  MANPAGER=cat MANWIDTH=80 man tokenctl 2>/dev/null | grep -q '^NAME' || fail "man tokenctl shows no page"
  [ "$(man -w tokenctl)" = /usr/share/man/man1/tokenctl.1.gz ] || fail "man tokenctl is $(man -w tokenctl)"
  completion=$("$support/complete-interactively.py" --shell bash \
    --script /usr/share/bash-completion/completions/tokenctl -- 'tokenctl lo') || fail "bash completion failed"
  json_line=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["line"])' "$completion")
  [ "$json_line" = "tokenctl login " ] || fail "tokenctl lo<TAB> in bash gave '$json_line': $completion"
  say "man tokenctl shows the page; tokenctl lo<TAB> completes to 'tokenctl login' in bash"

  # Python's keyring finds the backend through its entry point, and the backend answers a
  # URL of the forge with the account's token.
  python3 - "$remote/project.git" "$token" <<'PY' || fail "the keyring backend is not registered or not answering"
import sys
import keyring.backend
ours = [k for k in keyring.backend.get_all_keyring() if type(k).__module__ == "keyring_tokenctl"]
assert ours, "keyring does not list the tokenctl backend"
assert ours[0].get_password(sys.argv[1], "oauth2") == sys.argv[2], "the backend's answer is not the token"
PY
  say "Python's keyring lists the tokenctl backend, which answers with the token"

  touch "$sync/signed-in"
  await upgraded
  # D-Bus first, so that it is D-Bus activation that starts the new agent.
  [ -z "$(agent_pid)" ] || fail "the upgrade left the old agent running"
  [ "$(dbus_token)" = "$token" ] || fail "after the upgrade, D-Bus gives another token (or the consent is gone)"
  [ "$(tokenctl token forge:ada)" = "$token" ] || fail "after the upgrade, tokenctl token gives another token"
  second_agent=$(agent_pid)
  [ -n "$second_agent" ] && [ "$second_agent" != "$first_agent" ] \
    || fail "the agent after the upgrade is not a new one ($first_agent, then $second_agent)"
  say "after the upgrade: the same token, on D-Bus with the consent given before, from a new agent ($second_agent)"
  touch "$sync/checked"
  await removed
  exit 0
fi

[ "$(id -u)" = 0 ] || fail "run it as root: it installs and removes packages and adds a user"
for package in "${packages[@]}"; do
  if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -qE 'installed|config-files'; then
    fail "$package is installed already; this check would remove it: dpkg --purge ${packages[*]}"
  fi
done
user=tokenctl-deb-$$
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tokenctl-deb.XXXXXX")
chmod 755 "$scratch"
user_pid=
cleanup() {
  status=$?
  [ -z "$user_pid" ] || { touch "$scratch/sync/removed" 2>/dev/null; kill "$user_pid" 2>/dev/null || true; wait "$user_pid" 2>/dev/null || true; }
  if dpkg-query -W -f='${Status}\n' "${packages[@]}" 2>/dev/null | grep -qE 'installed|config-files'; then
    dpkg --purge "${packages[@]}" >/dev/null 2>&1 || true
  fi
  if uid=$(id -u "$user" 2>/dev/null); then
    # What runs as the user is what this check started; each process by its id.
    for proc in /proc/[0-9]*; do
      [ "$(stat -c %u "$proc" 2>/dev/null)" = "$uid" ] && kill -KILL "${proc#/proc/}" 2>/dev/null
    done
    userdel --remove "$user" >/dev/null 2>&1 || true
  fi
  Tests/Support/auth-server.sh stop "$scratch/provider" >/dev/null 2>&1 || true
  rm -rf "$scratch"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

start=$(date +%s)
say "make deb"
make --no-print-directory deb DEB_DIR="$scratch/deb" >"$scratch/deb.log" 2>&1 \
  || { tail -40 "$scratch/deb.log"; fail "make deb failed (log above)"; }
say "make deb took $(($(date +%s) - start)) s"
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg-architecture -q DEB_HOST_ARCH)
changes=$scratch/deb/tokenctl_${version}_${arch}.changes
for deb in "tokenctl_${version}_${arch}" "tokenctl-dbgsym_${version}_${arch}" "python3-keyring-tokenctl_${version}_all"; do
  [ -f "$scratch/deb/$deb.deb" ] || fail "make deb made no $deb.deb"
done
lintian --fail-on error,warning --tag-display-limit 0 "$changes" >"$scratch/lintian.log" 2>&1 \
  || { cat "$scratch/lintian.log"; fail "lintian found errors or warnings (above)"; }
say "lintian: no error, no warning$( [ -s "$scratch/lintian.log" ] && echo "; it says:" )"
sed 's/^/  /' "$scratch/lintian.log"

# Version N+1: one more changelog entry, in a copy of debian/ mounted over the checkout's.
next="${version%-*}-$((${version##*-} + 1))"
mkdir "$scratch/next"
cp -a debian "$scratch/next/debian"
(cd "$scratch/next" && DEBFULLNAME="tokenctl check-deb" DEBEMAIL="check-deb@localhost" \
  dch --changelog debian/changelog -v "$next" --distribution unstable --force-distribution \
    "The upgrade test's next version.") >/dev/null 2>&1 || fail "dch -v $next failed"
unshare --mount --propagation private sh -c 'mount --bind "$1" debian && exec make --no-print-directory deb DEB_DIR="$2"' \
  build-next "$scratch/next/debian" "$scratch/deb-next" >"$scratch/deb-next.log" 2>&1 \
  || { tail -40 "$scratch/deb-next.log"; fail "make deb of version $next failed (log above)"; }
say "version $next built"

# Recommends are not installed: a Secret Service and dbus-user-session are here already,
# and what the check installs it must be able to take away again.
apt_get() { DEBIAN_FRONTEND=noninteractive apt-get "$@" -y -qq --no-install-recommends >"$scratch/apt.log" 2>&1 || { cat "$scratch/apt.log"; fail "apt-get $* failed"; }; }
apt_get install "$scratch/deb/tokenctl_${version}_${arch}.deb" "$scratch/deb/python3-keyring-tokenctl_${version}_all.deb"
installed=$(dpkg-query -W -f='${Version}' tokenctl)
[ "$installed" = "$version" ] || fail "dpkg says tokenctl $installed, not $version"
[ "$(tokenctl --version)" = "tokenctl ${version%-*}" ] || fail "tokenctl --version says $(tokenctl --version), the package ${version%-*}"
[ "$(readlink /etc/systemd/user/sockets.target.wants/tokenctl-agent.socket)" = /usr/lib/systemd/user/tokenctl-agent.socket ] \
  || fail "the agent's socket is not enabled for user sessions (/etc/systemd/user/sockets.target.wants)"
agents() {
  for proc in /proc/[0-9]*; do
    exe=$(readlink "$proc/exe" 2>/dev/null) || continue
    case $exe in "$program" | "$program (deleted)" | "$agent_program" | "$agent_program (deleted)") echo "${proc#/proc/}" ;; esac
  done
  return 0
}
[ -z "$(agents)" ] || fail "installing started tokenctl (pids $(agents))"
say "installed $version: tokenctl --version agrees, the socket is enabled for the next login, nothing started"
dpkg -L "${packages[@]}" | sort -u >"$scratch/files"

Tests/Support/auth-server.sh start "$scratch/provider" --watch-pid $$ --lifetime 1200 >"$scratch/provider.log" 2>&1 \
  || { cat "$scratch/provider.log"; fail "the test provider did not start"; }
chmod -R a+rX "$scratch/provider"
useradd --create-home --shell /bin/bash "$user"
mkdir -m 777 "$scratch/sync"
bwrap --dev-bind / / --tmpfs /opt/swift --die-with-parent -- \
  setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups -- \
  env -i HOME="/home/$user" USER="$user" LOGNAME="$user" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 TMPDIR=/tmp \
  "$root/Tests/Support/with-private-keyring.sh" "$0" --user "$scratch/sync" "$scratch/provider" &
user_pid=$!
# Waits up to 3 minutes for the user's side to touch sync/MARK; fails with GONE when it
# ends first, with LATE when the time is up.
wait_for_user() {
  local mark=$1 gone=$2 late=$3
  for _ in $(seq 1800); do
    [ -e "$scratch/sync/$mark" ] && return
    kill -0 "$user_pid" 2>/dev/null || { wait "$user_pid" || true; user_pid=; fail "$gone"; }
    sleep 0.1
  done
  fail "$late"
}
wait_for_user signed-in "the user's checks failed (above)" "the user did not sign in within 3 minutes"

apt_get install "$scratch/deb-next/tokenctl_${next}_${arch}.deb" "$scratch/deb-next/python3-keyring-tokenctl_${next}_all.deb"
[ "$(dpkg-query -W -f='${Version}' tokenctl)" = "$next" ] || fail "the upgrade to $next did not happen"
touch "$scratch/sync/upgraded"
wait_for_user checked "the user's checks after the upgrade failed (above)" \
  "the user's checks after the upgrade did not end within 3 minutes"
[ -n "$(agents)" ] || fail "no agent runs $agent_program before the removal: the removal would prove nothing"

apt_get remove "${packages[@]}"
left=$(agents)
[ -z "$left" ] || fail "an agent still runs after apt-get remove (pids $left)"
say "apt-get remove: no agent left running"
# dpkg, since apt no longer knows a removed local package that left no configuration.
dpkg --purge "${packages[@]}" >"$scratch/purge.log" 2>&1 || { cat "$scratch/purge.log"; fail "dpkg --purge failed"; }
while read -r path; do
  [ -d "$path" ] && [ ! -L "$path" ] && continue
  [ ! -e "$path" ] && [ ! -L "$path" ] || fail "purge left $path"
done <"$scratch/files"
leftover=$(find /etc /var/lib/systemd /usr/lib/systemd/user /usr/libexec /usr/share/dbus-1 /usr/share/doc \
  /usr/share/lintian /usr/lib/python3/dist-packages -name '*tokenctl*' 2>/dev/null || true)
[ -z "$leftover" ] || fail "purge left: $leftover"
say "purge: no file of either package left"

touch "$scratch/sync/removed"
wait "$user_pid" || { user_pid=; fail "the user's checks failed (above)"; }
user_pid=
say "ok in $(($(date +%s) - start)) s"
