#!/usr/bin/env bash
# The main job, end to end, as a user would see it: a local OpenID Connect provider
# (django-oauth-toolkit, Tests/AuthServer) stands in for Microsoft's identity platform;
# tokenctl signs in through a browser (Tests/Support/scripted-browser.sh plays the user),
# lists the account, hands out its token, refreshes it, gives git a token for a clone and
# a push as its credential helper, and revokes it at the server. It ends as the
# walkthrough did: signed in to Microsoft Graph (here a stand-in, Tests/Support/fake-graph.py,
# set up as a national cloud would be), searching the organisation's users.
# Run through `make demo`, inside a throw-away keyring and home directory.
set -euo pipefail
tokenctl=$1
helper=$(cd "$(dirname "$tokenctl")" && pwd)/git-credential-tokenctl
here=$(cd "$(dirname "$0")" && pwd)
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold= plain=; fi
say() { printf '\n%s# %s%s\n' "$bold" "$*" "$plain"; }
step() { printf '%s$ %s%s\n' "$bold" "$*" "$plain"; }
run() { step "tokenctl $*"; "$tokenctl" "$@" || echo "(exit status $?)"; }

state=$(mktemp -d)
trap '[ -z "${TOKENCTL_AGENT_SOCKET:-}" ] || "$tokenctl" agent stop >/dev/null 2>&1
  "$here/auth-server.sh" stop "$state" >/dev/null 2>&1; "$here/auth-server.sh" stop "$state/cloud" >/dev/null 2>&1
  [ -z "${graph_pid:-}" ] || kill "$graph_pid" 2>/dev/null
  rm -rf "$state"' EXIT
say "Start a local OpenID Connect provider on 127.0.0.1"
"$here/auth-server.sh" start "$state" --watch-pid $$
issuer=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["issuer"])' "$state/server.json")
echo "issuer: $issuer"

say "Register the app, as the walkthrough's 'Register an app' step did: client id in config.toml"
mkdir -p "$XDG_CONFIG_HOME/tokenctl"
cat >"$XDG_CONFIG_HOME/tokenctl/config.toml" <<TOML
# The generic OpenID Connect type, pointed at our provider.
[types.oidc]
issuer = "$issuer"
client_id = "tokenctl-native"
scopes = ["openid", "profile", "email"]
TOML
cat "$XDG_CONFIG_HOME/tokenctl/config.toml"

export BROWSER="$here/scripted-browser.sh" SCRIPTED_BROWSER_SERVER_JSON="$state/server.json"
export SCRIPTED_BROWSER_LOG="$state/browser.log" DISPLAY="${DISPLAY:-:demo}"
say "Sign in: tokenctl opens the browser, where the scripted user 'ada' signs in and consents"
run login oidc
say "Signing in again as the same user updates the account, it adds none"
run login oidc
run list
say "A script asks for a token (a valid one is handed out without any network)"
step 'curl -H "Authorization: Bearer $(tokenctl token oidc:ada)" …'
token=$("$tokenctl" token oidc:ada)
echo "got a token of ${#token} characters"
say "Refresh now: the provider rotates the refresh token, tokenctl stores the new one"
run refresh oidc:ada
run list --json
say "git: a git server on 127.0.0.1 that accepts only tokens the provider calls active"
mkdir -p "$state/repositories" "$state/git"
git init -q -b main "$state/seed" && git -C "$state/seed" -c user.name=Ada -c user.email=ada@example.org \
  commit -q --allow-empty -m "first commit"
git clone -q --bare "$state/seed" "$state/repositories/project.git"
read -r introspection client < <(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))
print(s["endpoints"]["introspection"], s["clients"]["service"]["client_id"] + ":" + s["clients"]["service"]["client_secret"])' \
  "$state/server.json")
"$here/git-http-server.py" --state-dir "$state/git" --root "$state/repositories" --introspect "$introspection" \
  --introspect-client "$client" --watch-pid $$ &
for _ in $(seq 100); do [ -s "$state/git/git-server.json" ] && break; sleep 0.1; done
remote=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["base_url"])' "$state/git/git-server.json")
host=${remote#http://}
# The forge's container registry, which takes the same tokens.
mkdir -p "$state/registry"
"$here/docker-registry-server.py" --state-dir "$state/registry" --introspect "$introspection" \
  --introspect-client "$client" --watch-pid $$ &
for _ in $(seq 100); do [ -s "$state/registry/registry.json" ] && break; sleep 0.1; done
registry=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["base_url"])' "$state/registry/registry.json")
registry=${registry#http://}
say "The forge's account type, as a user type file (tokenctl-types(5)): [git] names its hosts, the git server's and the registry's"
mkdir -p "$XDG_CONFIG_HOME/tokenctl/types"
# The same type as check-deb.sh's (Tests/Support/forge-type.toml.in), with the registry.
sed -e "s|@ISSUER@|$issuer|" -e "s|@HOSTS@|\"$host\", \"$registry\"|" "$here/forge-type.toml.in" \
  >"$XDG_CONFIG_HOME/tokenctl/types/forge.toml"
cat "$XDG_CONFIG_HOME/tokenctl/types/forge.toml"
run login forge
export GIT_CONFIG_GLOBAL="$state/gitconfig" GIT_TERMINAL_PROMPT=0 PATH="$(dirname "$helper"):$PATH"
# The forge and its authorization server are both on this machine: the helper answers
# plain http there, and setup-git configures http as well as https.
run setup-git --host "$host"
step "git clone $remote/project.git"
git clone -q "$remote/project.git" "$state/clone"
git -C "$state/clone" log --oneline
step "git push"
git -C "$state/clone" -c user.name=Ada -c user.email=ada@example.org commit -q --allow-empty -m "second commit"
git -C "$state/clone" push -q origin main
echo "the server has: $(git -C "$state/repositories/project.git" log --oneline | head -1)"
step "git credential fill   # what git gets (the token's length shown, not the token)"
printf 'protocol=http\nhost=%s\n\n' "$host" | git credential fill |
  awk -F= '$1 == "password" { print "password=(" length($2) " characters)"; next } { print }'

say "Containers: skopeo (as Podman and Docker would) pulls from the forge's registry with the same account"
if command -v skopeo >/dev/null; then
  run setup-docker --host "$registry"
  step "skopeo copy --src-tls-verify=false docker://$registry/tools/hello:1 dir:…"
  skopeo copy -q --src-tls-verify=false "docker://$registry/tools/hello:1" "dir:$state/image" &&
    echo "copied: $(ls "$state/image" | tr '\n' ' ')"
else
  echo "(skopeo is not installed: make deps installs it)"
fi

say "The agent (tokenctl-agent(1)): token, list and git's get are answered from memory"
export TOKENCTL_AGENT_SOCKET="$state/agent.sock"
run agent start
step "git credential fill   # answered by the agent"
printf 'protocol=http\nhost=%s\n\n' "$host" | git credential fill |
  awk -F= '$1 == "password" { print "password=(" length($2) " characters)"; next } { print }'
step 'tokenctl token oidc:ada   # answered by the agent'
token=$("$tokenctl" token oidc:ada)
echo "got a token of ${#token} characters"
run agent status

say "Desktop programs ask the agent on D-Bus (tokenctl-dbus(7)); each needs the user's consent"
# The token itself is not shown: only its length.
gdbus_call() {
  step "gdbus call --session --dest org.tokenctl.Agent --object-path /org/tokenctl/Agent \\"
  step "    --method org.tokenctl.Agent1.GetAccessToken '' oidc:ada 60   # $1"
  gdbus call --session --dest org.tokenctl.Agent --object-path /org/tokenctl/Agent \
    --method org.tokenctl.Agent1.GetAccessToken '' oidc:ada 60 2>&1 |
    python3 -c 'import re, sys
text = sys.stdin.read().strip()
print(re.sub(r"^\(\x27([^\x27]*)\x27", lambda m: "(<a token of %d characters>" % len(m.group(1)), text))' || true
}
gdbus_call "gdbus is not allowed yet"
run allow gdbus oidc:ada
gdbus_call "now it is"
run apps
run deny gdbus
run agent stop

say "Sign out: the tokens are revoked at the provider (RFC 7009), then forgotten"
run revoke forge:ada
run revoke oidc:ada
run list

say "The walkthrough's app: sign in to Microsoft Graph and search the organisation's users"
# The sign-ins of this part come from a second provider whose access tokens live 8 seconds,
# so that one runs out on the way. Graph is a stand-in on 127.0.0.1 that accepts the tokens
# that provider calls active (RFC 7662), two users a page, set up as a national cloud or a
# test tenant would be: a type file naming the sign-in's issuer and, with api_base, its Graph.
AUTH_SERVER_ACCESS_TOKEN_SECONDS=8 "$here/auth-server.sh" start "$state/cloud" --watch-pid $$ >/dev/null
cloud=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["issuer"])' "$state/cloud/server.json")
read -r introspection client < <(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))
print(s["endpoints"]["introspection"], s["clients"]["service"]["client_id"] + ":" + s["clients"]["service"]["client_secret"])' \
  "$state/cloud/server.json")
mkdir -p "$state/graph"
"$here/fake-graph.py" --state-dir "$state/graph" --page-size 2 --introspect "$introspection" \
  --introspect-client "$client" --watch-pid $$ --lifetime 600 &
graph_pid=$!
for _ in $(seq 100); do [ -s "$state/graph/fake-graph.json" ] && break; sleep 0.1; done
graph=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["base_url"])' "$state/graph/fake-graph.json")
cat >"$XDG_CONFIG_HOME/tokenctl/types/contoso.toml" <<TOML
id = "contoso"
display_name = "Microsoft Graph (Contoso, in a cloud of its own)"
issuer = "$cloud"
client_id = "tokenctl-graph"
scopes = ["openid", "profile", "offline_access", "User.Read", "User.ReadBasic.All"]
api_base = "$graph/v1.0"

[redirect]
host = "localhost"
TOML
cat "$XDG_CONFIG_HOME/tokenctl/types/contoso.toml"
export SCRIPTED_BROWSER_SERVER_JSON="$state/cloud/server.json"
run login contoso
# --verbose shows each HTTP exchange (never a token); only the answers are kept here.
graph_run() {
  step "tokenctl --verbose $*"
  "$tokenctl" --verbose "$@" 2>&1 | grep -v ' bytes of body)$' || echo "(exit status $?)"
}
say "Search by first name: Graph answers two users a page; tokenctl follows the next-page links"
graph_run graph users search Ad --account contoso:ada
say "Eight seconds later the access token has expired: tokenctl refreshes it, then asks Graph"
sleep 8
graph_run graph users show ada@contoso.test --account contoso:ada
run list
run revoke contoso:ada
"$here/auth-server.sh" stop "$state/cloud" >/dev/null
