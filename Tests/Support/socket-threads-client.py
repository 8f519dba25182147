#!/usr/bin/env python3
"""One program asking the agent's socket for a token from many threads at once.

Usage: socket-threads-client.py SOCKET ACCOUNT THREADS

Each thread connects, sends a token request for ACCOUNT and reads until the agent closes.
Prints a JSON object: how many connections got a frame back, and how many were closed
with none (what a program sees when the agent turns a connection away).
"""

import json
import socket
import struct
import sys
import threading


def ask(path, account, results, lock):
    payload = ("tokenctl-agent/1 token\ngroup=\naccount=%s\n" % account).encode()
    received = b""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(60)
            connection.connect(path)
            connection.sendall(struct.pack(">I", len(payload)) + payload)
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    break
                received += chunk
    except OSError:
        pass
    with lock:
        results["frames" if len(received) >= 4 else "closed"] += 1


def main():
    path, account, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    results = {"frames": 0, "closed": 0}
    lock = threading.Lock()
    threads = [threading.Thread(target=ask, args=(path, account, results, lock)) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
