#!/bin/sh
# Test authorization server (django-oauth-toolkit) on 127.0.0.1 for the integration tests.
#   auth-server.sh start STATE_DIR [--watch-pid PID] [--lifetime SECONDS]
#   auth-server.sh stop STATE_DIR
# `start` returns once the server answers and STATE_DIR/server.json is written; the server
# stops by itself when the process that ran `start` (or --watch-pid PID, 0 for none) is
# gone, and after --lifetime seconds (default 1200). See Tests/AuthServer/README.md.
here=$(cd "$(dirname "$0")" && pwd)
# exec, so that the server's default watched process is our caller.
exec "$here/auth-server-python.sh" "$(dirname "$here")/AuthServer/control.py" "$@"
