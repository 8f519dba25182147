#!/usr/bin/env python3
"""Django's command-line utility for the test authorization server.

Needs AUTH_SERVER_STATE_DIR (where db.sqlite3 and oidc-rsa.pem live); the launcher
Tests/Support/auth-server.sh sets everything up, this is for poking at a state dir by hand.
"""
import os
import sys

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, here)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "authserver.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
