#!/usr/bin/env bash
# Answers a Secret Service provider's dialogs as a user at the desktop would, for the
# provider tests (Tests/Support/with-secret-service.sh starts it):
#
#   answer-keyring-prompts.sh PROVIDER ANSWER-FILE
#
# ANSWER-FILE holds "allow" (confirm access, unlock with the test password, confirm a
# deletion), "deny" (close the dialog as Escape does: KeePassXC then leaves the items
# locked), or anything else (leave the dialogs open, as a user who is away). Each answer
# is logged with its time, so that a test can tell that a dialog was shown.
set -uo pipefail
provider=$1
answers=$2

declare -A answered
while sleep 0.2; do
  answer=$(cat "$answers" 2>/dev/null)
  [[ $answer == allow || $answer == deny ]] || continue
  case "$provider" in
    # Titles of KeePassXC 2.7.4's dialogs: the access confirmation, a locked database's
    # unlock dialog, the confirmation of a deletion.
    keepassxc) titles=("Access Request" "Unlock Database" "recycle bin" "Delete entr") ;;
    kwallet) titles=("KDE Wallet Service") ;;
  esac
  for title in "${titles[@]}"; do
    for window in $(xdotool search --onlyvisible --name "$title" 2>/dev/null); do
      # A dialog stays up a moment after its answer (KeePassXC derives the key), and
      # KeePassXC shows the next one in the same window: answer a window again only
      # after 2 s.
      (( SECONDS - ${answered[$window]:--10} < 2 )) && continue
      # The answer read again once the dialog is up: a test writes its answer before the
      # call that shows the dialog, so the file read at the top of the loop may predate it
      # (a "deny" test's unlock dialog was answered with the "allow" read just before).
      answer=$(cat "$answers" 2>/dev/null)
      [[ $answer == allow || $answer == deny ]] || continue
      answered[$window]=$SECONDS
      echo "$(date +%T.%N) $answer: $(xdotool getwindowname "$window")"
      # Keys sent to the window itself (XSendEvent), which Qt takes: with no window
      # manager running, focusing a window first does not work.
      if [[ $answer == deny ]]; then
        xdotool key --window "$window" Escape
      elif [[ $title == "Unlock Database" ]]; then
        # The field replaced, not appended to: a dialog answered again (its first answer
        # typed before it took keys, or refused) would otherwise get the password twice.
        xdotool key --window "$window" ctrl+a
        xdotool type --window "$window" --delay 20 "${KEEPASSXC_PASSWORD:-}"
        xdotool key --window "$window" Return
      else
        xdotool key --window "$window" Return
      fi
    done
  done
done
