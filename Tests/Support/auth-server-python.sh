#!/bin/sh
# Runs the test authorization server's Python (.build-python/venv, made by
# `make auth-server-deps`) with the arguments given, in this process: what auth-server.sh
# and scripted-browser.sh start their Python programs with.
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$(dirname "$here")")
python="$root/.build-python/venv/bin/python"
if [ ! -x "$python" ]; then
    echo "auth-server-python: no Python environment at $root/.build-python/venv; run 'make auth-server-deps'" >&2
    exit 1
fi
exec "$python" "$@"
