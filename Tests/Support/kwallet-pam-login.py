#!/usr/bin/env python3
"""Starts kwalletd5 as pam_kwallet5 does at login, and prints its pid.

pam_kwallet5 runs `kwalletd5 --pam-login KEYFD SOCKETFD` with PAM_KWALLET5_LOGIN set,
writes the 56-byte key it derived from the login password to the pipe KEYFD, then
connects to the listening socket SOCKETFD and sends the session's environment, one
NAME=value a line. kwalletd5 then opens (the first time: creates) the wallet with that
key and joins the session bus. Any 56 bytes make a test key.
"""
import os
import socket
import subprocess
import sys
import time

KEY_SIZE = 56  # KWALLET_PAM_KEYSIZE in kwallet-pam
PASSED = ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "XDG_RUNTIME_DIR", "HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME")

path = os.path.join(os.environ["XDG_RUNTIME_DIR"], "kwallet-pam-login.socket")
if os.path.exists(path):
    os.unlink(path)
key_read, key_write = os.pipe()
listener = socket.socket(socket.AF_UNIX)
listener.bind(path)
listener.listen(1)
daemon = subprocess.Popen(
    ["kwalletd5", "--pam-login", str(key_read), str(listener.fileno())],
    pass_fds=(key_read, listener.fileno()), stdout=sys.stderr, stderr=sys.stderr,
    env=dict(os.environ, PAM_KWALLET5_LOGIN="1"))
os.close(key_read)
listener.close()
os.write(key_write, bytes(range(KEY_SIZE)))
os.close(key_write)
for _ in range(100):
    try:
        client = socket.socket(socket.AF_UNIX)
        client.connect(path)
        break
    except OSError:
        time.sleep(0.05)
client.sendall("".join(f"{name}={os.environ[name]}\n" for name in PASSED if name in os.environ).encode())
client.close()
print(daemon.pid)
