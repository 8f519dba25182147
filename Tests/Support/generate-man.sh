#!/usr/bin/env bash
# Writes tokenctl's section 1 man pages, generated from the command definitions by
# swift-argument-parser's GenerateManual plugin, into OUTDIR.
#
#   Tests/Support/generate-man.sh DATE OUTDIR
#
# DATE (yyyy-mm-dd) is stamped into the pages so that the output is reproducible.
set -euo pipefail
date=$1 outdir=$2
cd "$(dirname "$0")/../.."
generated=.build/plugins/GenerateManual/outputs/tokenctl
rm -rf "$generated"
swift package --disable-sandbox plugin generate-manual --multi-page --date "$date" \
  --authors 'the tokenctl authors' --configuration debug >/dev/null
# Commands whose names start with '_' are tokenctl's own plumbing (the refresh child),
# hidden from help: they get no page and no mention.
rm -f "$generated"/tokenctl._*.1
sed -i '/^\.Xr tokenctl\._/d' "$generated"/*.1
# `tokenctl agent` has one page, the hand-written tokenctl-agent(1), which its generated
# page would take the name of below; its subcommands keep theirs.
rm -f "$generated"/tokenctl.agent.1
# Named as git's and gh's subcommand pages are, so that `man tokenctl-login` finds
# `tokenctl login`'s page: tokenctl.login.1 becomes tokenctl-login.1, and every reference
# to a page with it. The DESCRIPTION's paragraphs come as empty lines, which mdoc warns
# of: each becomes a paragraph break.
for page in "$generated"/*.1; do
  sed -i -e '/^\.Dt /{s/\./-/g;s/^-Dt/.Dt/}' -e '/^\.Xr tokenctl\./{s/\./-/g;s/^-Xr/.Xr/}' -e 's/^$/.Pp/' "$page"
done
for page in "$generated"/tokenctl.*.1; do
  mv "$page" "$generated/$(basename "$page" .1 | tr . -).1"
done
# Each page's examples, as a user types them; they go in an EXAMPLES section before
# EXIT STATUS.
examples_of() {
  case $1 in
    tokenctl) printf '%s\n' 'tokenctl login github' 'tokenctl list' \
      'curl -H "Authorization: Bearer $(tokenctl token github:ada)" https://api.github.com/user' 'tokenctl setup-git' ;;
    tokenctl-login) printf '%s\n' 'tokenctl login graph' 'tokenctl login graph --device' \
      'tokenctl login oidc --issuer https://id.example.org/realms/staff' 'tokenctl login graph:ada@contoso.com' ;;
    tokenctl-token) printf '%s\n' 'tokenctl token graph:ada@contoso.com' 'tokenctl token ada --min-valid 600' \
      'tokenctl token graph:ada --scope https://management.azure.com/.default' 'tokenctl token github:octo --json' ;;
    tokenctl-list) printf '%s\n' 'tokenctl list' 'tokenctl list --type graph --json' ;;
    tokenctl-status) printf '%s\n' 'tokenctl status' 'tokenctl whoami --json' ;;
    tokenctl-refresh) printf '%s\n' 'tokenctl refresh graph:ada@contoso.com' 'tokenctl refresh --all' ;;
    tokenctl-revoke) printf '%s\n' 'tokenctl revoke graph:ada@contoso.com' 'tokenctl revoke github:octo --local' ;;
    tokenctl-request) printf '%s\n' 'tokenctl request graph:ada@contoso.com /me' \
      'tokenctl request github:octo /user/repos --json' "tokenctl request gitlab:ada /projects -d '{\"name\": \"app\"}'" ;;
    tokenctl-types) printf '%s\n' 'tokenctl types' 'tokenctl types --check ~/.config/tokenctl/types/corp.toml' ;;
    tokenctl-setup-git) printf '%s\n' 'tokenctl setup-git' 'tokenctl setup-git --host git.corp.example' ;;
    tokenctl-setup-docker) printf '%s\n' 'tokenctl setup-docker --host registry.corp.example' ;;
    tokenctl-doctor) printf '%s\n' 'tokenctl doctor' 'tokenctl doctor --online' ;;
    tokenctl-allow) printf '%s\n' 'tokenctl allow /usr/bin/gdbus github:ada' 'tokenctl allow flatpak:org.example.App --all --group work' ;;
    tokenctl-deny) printf '%s\n' 'tokenctl deny /usr/bin/gdbus' ;;
    tokenctl-apps) printf '%s\n' 'tokenctl apps' ;;
    tokenctl-unregister) printf '%s\n' 'tokenctl unregister https://id.example.org/realms/staff' ;;
    tokenctl-graph-users-search) printf '%s\n' 'tokenctl graph users search Ada' \
      'tokenctl graph users search Lovelace --by surname --top 5' ;;
    tokenctl-agent-start) printf '%s\n' 'tokenctl agent start' 'tokenctl agent status' ;;
  esac
}
for page in "$generated"/*.1; do
  lines=$(examples_of "$(basename "$page" .1)")
  [ -n "$lines" ] || continue
  {
    printf '.Sh EXAMPLES\n.Bd -literal -offset indent\n'
    printf '%s\n' "$lines" | sed -e 's/\\/\\e/g' -e 's/^/$ /'
    printf '.Ed\n'
  } > "$generated/examples"
  awk -v examples="$generated/examples" \
    '/^\.Sh "EXIT STATUS"/ { while ((getline line < examples) > 0) print line } { print }' "$page" > "$page.new"
  mv "$page.new" "$page"
  rm "$generated/examples"
done
cp "$generated"/*.1 "$outdir"/
