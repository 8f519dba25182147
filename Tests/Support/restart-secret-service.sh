#!/usr/bin/env bash
# Restarts the Secret Service provider Tests/Support/with-secret-service.sh started, as a
# restart of the user's session would, and returns once the new one owns
# org.freedesktop.secrets on the bus; for tests of what a long-lived process does then.
# with-secret-service.sh gives its tests the command line as TOKENCTL_TEST_RESTART_PROVIDER:
#
#   restart-secret-service.sh gnome-keyring|kwallet SCRATCH
#
#   gnome-keyring  gnome-keyring-daemon --replace, on the same login keyring, unlocked
#   kwallet        kwalletd5 ended, and started again as pam_kwallet5 starts it at login
#                  (kwallet-pam-login.py): the same wallet, opened with the login key
#
# SCRATCH is with-secret-service.sh's folder: provider.pid there names the provider's process
# (written here for the new one), and provider.restarting, while it exists, tells
# with-secret-service.sh's watch that the provider is away on purpose.
set -euo pipefail
provider=${1:?usage: restart-secret-service.sh gnome-keyring|kwallet SCRATCH}
scratch=${2:?usage: restart-secret-service.sh gnome-keyring|kwallet SCRATCH}
here=$(cd "$(dirname "$0")" && pwd)

owner() {
  dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.GetNameOwner string:org.freedesktop.secrets 2>/dev/null | tr -d ' ' || true
}

# Waits, up to 20 s, until a name other than $1 owns org.freedesktop.secrets.
await_new_owner() {
  local current
  for _ in $(seq 100); do
    current=$(owner)
    if [[ -n $current && $current != "$1" ]]; then return 0; fi
    sleep 0.2
  done
  echo "restart-secret-service.sh: no new $provider took org.freedesktop.secrets; its log: $scratch/$provider.log" >&2
  return 1
}

previous=$(owner)
touch "$scratch/provider.restarting"
trap 'rm -f "$scratch/provider.restarting"' EXIT
case "$provider" in
  gnome-keyring)
    printf '%s' tokenctl-test | gnome-keyring-daemon --replace --unlock --components=secrets >/dev/null
    await_new_owner "$previous"
    ;;
  kwallet)
    # kwalletd5 writes a changed wallet to its file a few seconds later, or when the wallet
    # closes, and SIGTERM ends it without writing: the wallets are closed first, as a
    # logout closes them, so that the restart loses nothing the tests wrote.
    dbus-send --session --print-reply --dest=org.kde.kwalletd5 /modules/kwalletd5 \
      org.kde.KWallet.closeAllWallets >/dev/null
    old=$(cat "$scratch/provider.pid")
    kill "$old"
    for _ in $(seq 100); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$old" 2>/dev/null; then
      echo "restart-secret-service.sh: kwalletd5 (pid $old) did not end within 10 s" >&2
      exit 1
    fi
    python3 "$here/kwallet-pam-login.py" 2>>"$scratch/$provider.log" >"$scratch/provider.pid"
    await_new_owner "$previous"
    ;;
  *)
    echo "restart-secret-service.sh: cannot restart '$provider' (gnome-keyring or kwallet)" >&2
    exit 2
    ;;
esac
