#!/usr/bin/env bash
# Runs a command against a throw-away GNOME keyring on a private D-Bus session bus, so
# that tests, the demo and the benchmarks never touch the user's real keyring.
#
#   Tests/Support/with-private-keyring.sh COMMAND [ARG...]
#
# HOME and the XDG directories point into a temporary directory that is removed
# afterwards; the keyring there is created and unlocked with a fixed password. Inside,
# TOKENCTL_TEST_KEYRING=1 tells the test suites that they may write to the keyring.
set -euo pipefail

if [[ "${1:-}" != "--inside" ]]; then
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/tokenctl-keyring.XXXXXX")
  trap 'rm -rf "$scratch"' EXIT
  mkdir -p "$scratch/home" "$scratch/runtime"
  chmod 700 "$scratch/runtime"
  status=0
  env -u DBUS_SESSION_BUS_ADDRESS -u GNOME_KEYRING_CONTROL -u SSH_AUTH_SOCK -u DISPLAY -u WAYLAND_DISPLAY \
    HOME="$scratch/home" XDG_DATA_HOME="$scratch/home/.local/share" XDG_CONFIG_HOME="$scratch/home/.config" \
    XDG_CACHE_HOME="$scratch/home/.cache" XDG_RUNTIME_DIR="$scratch/runtime" \
    dbus-run-session -- "$0" --inside "$@" || status=$?
  exit "$status"
fi
shift

# --unlock reads the password from standard input, creates the login keyring if there is
# none, and makes it the default collection; it prints the variables clients need.
eval "$(printf '%s' "tokenctl-test" | gnome-keyring-daemon --unlock --components=secrets)"
export GNOME_KEYRING_CONTROL
export TOKENCTL_TEST_KEYRING=1
exec "$@"
