#!/bin/sh
# A scripted user with a browser, for the test authorization server: use it as $BROWSER.
#   scripted-browser.sh URL                               (detaches, returns at once)
#   scripted-browser.sh --device VERIFICATION_URI [USER_CODE]
# Configured through SCRIPTED_BROWSER_* variables; see Tests/AuthServer/scripted_browser.py
# and Tests/AuthServer/README.md.
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/auth-server-python.sh" "$(dirname "$here")/AuthServer/scripted_browser.py" "$@"
