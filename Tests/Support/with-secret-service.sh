#!/usr/bin/env bash
# Runs a command against a throw-away Secret Service of the named provider, headless
# (Xvfb) on a private D-Bus session bus, each set up with the defaults a user has:
#
#   Tests/Support/with-secret-service.sh PROVIDER COMMAND [ARG...]
#
#   gnome-keyring  the login keyring, created and unlocked (what with-private-keyring.sh does)
#   keepassxc      KeePassXC 2.7 with its Secret Service integration on, two databases
#                  open and unlocked, each exposing its root group: "Passwords" (the
#                  default collection) and "Other"; access
#                  confirmation is on, as KeePassXC ships it, so every new client gets a
#                  dialog
#   kwallet        kwalletd5 as a KDE login leaves it: the wallet "Default keyring" created
#                  and opened by PAM (kwalletd5 --pam-login), its Secret Service collection
#                  reporting Locked until a client unlocks it
#
# Exits with the command's status, or 75 when the provider (KeePassXC, kwalletd5) died
# while the command ran, having ended the command.
#
# Inside, TOKENCTL_TEST_KEYRING=1 tells the test suites they may write to the keyring,
# TOKENCTL_TEST_PROVIDER names the provider, TOKENCTL_TEST_RESTART_PROVIDER is a command
# that restarts it as a user's session would (gnome-keyring and kwallet; unset for
# KeePassXC), and a background job answers the provider's
# dialogs as a user would: with what the file $TOKENCTL_TEST_PROMPT_ANSWER holds (allow,
# the default, or deny; anything else leaves them open). KEEPASSXC_PASSWORD is the
# databases' password, for tests that lock and unlock them.
set -euo pipefail
[[ -n "${TRACE:-}" ]] && set -x

provider=${1:?usage: with-secret-service.sh gnome-keyring|keepassxc|kwallet COMMAND [ARG...]}
case "$provider" in
  gnome-keyring | keepassxc | kwallet) ;;
  --inside) ;;
  *) echo "with-secret-service.sh: unknown provider '$provider' (gnome-keyring, keepassxc or kwallet)" >&2; exit 2 ;;
esac

if [[ "$provider" != "--inside" ]]; then
  shift
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/tokenctl-$provider.XXXXXX")
  trap 'rm -rf "$scratch"' EXIT
  mkdir -p "$scratch/home/.config" "$scratch/home/.local/share" "$scratch/runtime"
  chmod 700 "$scratch/runtime"
  # KWallet's bus starts no service of its own: the system's service files would have the
  # bus start gnome-keyring-daemon for the first call that finds org.freedesktop.secrets
  # without an owner, as while a test restarts kwalletd5, and it would keep the name.
  bus_config=()
  if [[ $provider == kwallet ]]; then
    mkdir -p "$scratch/dbus-services"
    cat >"$scratch/session.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>unix:dir=$scratch/runtime</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$scratch/dbus-services</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
    bus_config=(--config-file="$scratch/session.conf")
  fi
  status=0
  env -u DBUS_SESSION_BUS_ADDRESS -u GNOME_KEYRING_CONTROL -u SSH_AUTH_SOCK -u DISPLAY -u WAYLAND_DISPLAY \
    HOME="$scratch/home" XDG_DATA_HOME="$scratch/home/.local/share" XDG_CONFIG_HOME="$scratch/home/.config" \
    XDG_CACHE_HOME="$scratch/home/.cache" XDG_RUNTIME_DIR="$scratch/runtime" TOKENCTL_TEST_SCRATCH="$scratch" \
    dbus-run-session "${bus_config[@]}" -- "$0" --inside "$provider" "$@" || status=$?
  exit "$status"
fi
shift
provider=$1
shift
scratch=$TOKENCTL_TEST_SCRATCH
unset TOKENCTL_TEST_SCRATCH
here=$(cd "$(dirname "$0")" && pwd)

children=()
cleanup() {
  for pid in "${children[@]}"; do kill "$pid" 2>/dev/null || true; done
  # A provider the command restarted (restart-secret-service.sh) is no child of ours.
  if [[ -s $scratch/provider.pid ]]; then kill "$(cat "$scratch/provider.pid")" 2>/dev/null || true; fi
  wait 2>/dev/null || true
}
trap cleanup EXIT

# Waits until somebody owns NAME on the session bus, for up to 20 s, or until the
# provider (pid PID, when given) has exited without taking it.
wait_for_name() {
  for _ in $(seq 100); do
    if dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
      org.freedesktop.DBus.GetNameOwner "string:$1" >/dev/null 2>&1; then return 0; fi
    [[ -n ${2:-} ]] && ! kill -0 "$2" 2>/dev/null && break
    sleep 0.2
  done
  echo "with-secret-service.sh: nobody took $1 on the bus; see $scratch/$provider.log" >&2
  cat "$scratch/$provider.log" >&2 || true
  if [[ -s $scratch/xvfb.log ]]; then
    echo "with-secret-service.sh: Xvfb's log ($DISPLAY):" >&2
    cat "$scratch/xvfb.log" >&2
  fi
  return 1
}

# Whether process PID holds the listening socket of X display NUMBER (the abstract one,
# which X clients on Linux try first; Xvfb -displayfd writes no lock file).
listens_on() {
  local inode
  for inode in $(awk -v name="@/tmp/.X11-unix/X$2" '$8 == name { print $7 }' /proc/net/unix); do
    ls -l "/proc/$1/fd" 2>/dev/null | grep -q "socket:\[$inode\]" && return 0
  done
  return 1
}

start_xvfb() {
  # -displayfd: Xvfb picks a free display and writes its number once it accepts clients.
  # A server of a run that just ended may still hold that display's socket a
  # moment (one CI run's KeePassXC found nobody on the display it was given), so the
  # server is taken only once a client reaches that display and the display's socket is
  # this server's; otherwise it is started again, up to three times.
  local attempt xvfb display
  for attempt in 1 2 3; do
    exec {display_fd}<> <(:)
    Xvfb -displayfd "$display_fd" -screen 0 1280x800x24 -nolisten tcp >>"$scratch/xvfb.log" 2>&1 &
    xvfb=$!
    display=
    read -r -t 20 -u "$display_fd" display || true
    exec {display_fd}>&-
    if [[ -n $display ]]; then
      for _ in $(seq 100); do
        kill -0 "$xvfb" 2>/dev/null || break
        if DISPLAY=":$display" xdotool getdisplaygeometry >/dev/null 2>&1 && listens_on "$xvfb" "$display"; then
          children+=("$xvfb")
          export DISPLAY=":$display"
          break 2
        fi
        sleep 0.1
      done
    fi
    echo "with-secret-service.sh: Xvfb (pid $xvfb, display '${display:-none}') did not answer as its own; attempt $attempt of 3" >&2
    kill "$xvfb" 2>/dev/null || true
    wait "$xvfb" 2>/dev/null || true
  done
  if [[ -z ${DISPLAY:-} ]]; then
    echo "with-secret-service.sh: Xvfb did not start; its log:" >&2
    cat "$scratch/xvfb.log" >&2 || true
    exit 1
  fi
  export TOKENCTL_TEST_PROMPT_ANSWER="$scratch/prompt-answer"
  echo allow >"$TOKENCTL_TEST_PROMPT_ANSWER"
  "$here/answer-keyring-prompts.sh" "$provider" "$TOKENCTL_TEST_PROMPT_ANSWER" >>"$scratch/prompts.log" 2>&1 &
  children+=($!)
}

case "$provider" in
  gnome-keyring)
    eval "$(printf '%s' "tokenctl-test" | gnome-keyring-daemon --unlock --components=secrets)"
    export GNOME_KEYRING_CONTROL
    ;;
  keepassxc)
    export KEEPASSXC_PASSWORD=tokenctl-test
    start_xvfb
    # A database whose metadata names its root group as the one exposed over the Secret
    # Service (KeePassXC keeps that in the custom data FDO_SECRETS_EXPOSED_GROUP; without
    # it a database stays out of the Secret Service). keepassxc-cli imports it from
    # KeePass's XML; -t 100 keeps the key derivation at 100 ms so unlocking stays quick.
    for database in Passwords Other; do
      uuid=$(python3 -c 'import uuid; print(uuid.uuid4())')
      base64=$(python3 -c 'import base64, sys, uuid; print(base64.b64encode(uuid.UUID(sys.argv[1]).bytes).decode())' "$uuid")
      cat >"$scratch/$database.xml" <<EOF
<?xml version="1.0" encoding="utf-8" standalone="yes"?>
<KeePassFile>
  <Meta>
    <DatabaseName>$database</DatabaseName>
    <RecycleBinEnabled>True</RecycleBinEnabled>
    <CustomData><Item><Key>FDO_SECRETS_EXPOSED_GROUP</Key><Value>{$uuid}</Value></Item></CustomData>
  </Meta>
  <Root><Group><UUID>$base64</UUID><Name>$database</Name></Group></Root>
</KeePassFile>
EOF
      printf '%s\n%s\n' "$KEEPASSXC_PASSWORD" "$KEEPASSXC_PASSWORD" \
        | keepassxc-cli import -q -p -t 100 "$scratch/$database.xml" "$scratch/$database.kdbx" >/dev/null 2>&1
    done
    export KEEPASSXC_DATABASES="$scratch/Passwords.kdbx:$scratch/Other.kdbx"
    # The Secret Service integration is off until the user turns it on; everything else
    # (access confirmation, unlock before search, confirm delete) keeps its default.
    mkdir -p "$XDG_CONFIG_HOME/keepassxc"
    printf '[General]\nConfigVersion=2\n\n[FdoSecrets]\nEnabled=true\n' >"$XDG_CONFIG_HOME/keepassxc/keepassxc.ini"
    printf '%s' "$KEEPASSXC_PASSWORD" | QT_QPA_PLATFORM=xcb keepassxc --pw-stdin \
      "$scratch/Passwords.kdbx" "$scratch/Other.kdbx" >"$scratch/$provider.log" 2>&1 &
    children+=($!)
    provider_pid=$!
    wait_for_name org.freedesktop.secrets "$provider_pid"
    # --pw-stdin opens the first database only, and KeePassXC lists the second one once
    # the first is open: unlock until both are listed and open, the other's dialog answered
    # with its password as a user would.
    for _ in $(seq 5); do
      listed=$("$here/keyring-collections.py" list)
      [[ $(grep -c $'\tunlocked$' <<<"$listed") == 2 ]] && break
      if grep -q $'\tlocked$' <<<"$listed"; then timeout 10 "$here/keyring-collections.py" unlock || true; fi
      sleep 0.3
    done
    ;;
  kwallet)
    start_xvfb
    # kwalletd5 as pam_kwallet5 starts it at login: the key derived from the login password
    # through a pipe, the session's environment through a socket. The first login creates
    # the wallet; its Secret Service collection appears from the second daemon on, so log
    # in twice.
    printf '[Wallet]\nEnabled=true\nFirst Use=false\n' >"$XDG_CONFIG_HOME/kwalletrc"
    for login in first second; do
      pid=$(python3 "$here/kwallet-pam-login.py" 2>>"$scratch/$provider.log")
      children+=("$pid")
      provider_pid=$pid
      wait_for_name org.freedesktop.secrets "$pid"
      if [[ $login == first ]]; then
        for _ in $(seq 50); do compgen -G "$XDG_DATA_HOME/kwalletd/*.kwl" >/dev/null && break; sleep 0.1; done
        kill "$pid"
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
      fi
    done
    ;;
esac

export TOKENCTL_TEST_KEYRING=1 TOKENCTL_TEST_PROVIDER="$provider"
# restart-secret-service.sh writes the new provider's pid to provider.pid, and holds
# provider.restarting while it has none, so that the watch below does not take a restart
# for a crash.
case "$provider" in
  gnome-keyring | kwallet)
    export TOKENCTL_TEST_RESTART_PROVIDER="$here/restart-secret-service.sh $provider $scratch"
    if [[ -n ${provider_pid:-} ]]; then echo "$provider_pid" >"$scratch/provider.pid"; fi
    ;;
esac
if [[ -z ${provider_pid:-} ]]; then
  status=0
  "$@" || status=$?
  exit "$status"
fi

# A provider that dies under the command (KeePassXC 2.7.4 segfaults now and then) leaves
# libsecret waiting for ever on a prompt that can no longer complete: the command is ended
# then, and this exits 75, so that a crash is a failure that says so, not a hang. The
# command runs in a process group of its own (set -m) so that its children go with it.
alive() { [[ -e /proc/$1 ]] && ! grep -q '^[^)]*) Z' "/proc/$1/stat" 2>/dev/null; }
set -m
"$@" &
command=$!
set +m
while alive "$command"; do
  [[ -s $scratch/provider.pid ]] && provider_pid=$(cat "$scratch/provider.pid")
  if [[ ! -e $scratch/provider.restarting ]] && ! alive "$provider_pid"; then
    echo "with-secret-service.sh: $provider (pid $provider_pid) exited while the command ran (a crash: see dmesg);" \
      "ending the command; the provider's log:" >&2
    tail -n 20 "$scratch/$provider.log" >&2 || true
    kill -TERM -- "-$command" 2>/dev/null || true
    for _ in $(seq 50); do alive "$command" || break; sleep 0.2; done
    kill -KILL -- "-$command" 2>/dev/null || true
    wait "$command" 2>/dev/null || true
    exit 75
  fi
  sleep 1
done
status=0
wait "$command" || status=$?
# A failure against a provider with dialogs shows what was answered and what the provider
# logged, which is all there is to tell a dialog answered wrong from a provider's fault.
if [[ $status != 0 && -s $scratch/prompts.log ]]; then
  echo "with-secret-service.sh: the command exited $status; the dialogs answered (last 20):" >&2
  tail -n 20 "$scratch/prompts.log" >&2
  echo "with-secret-service.sh: $provider's log (last 20 lines):" >&2
  tail -n 20 "$scratch/$provider.log" >&2 || true
fi
exit "$status"
