#!/usr/bin/env python3
"""A program that hands its agent connection to a child, then execs another program.

Usage: socket-fork-exec-client.py SOCKET ACCOUNT PROGRAM

Connects to the agent's socket, forks, and execs PROGRAM (a Python, told to sleep) in the
parent. The child keeps the connection; once the parent's exec has happened (a pipe whose
write end closes at exec tells it), the child asks for ACCOUNT's token and prints the
answer's payload. The agent must judge the child, which wrote the request, not the
program that now holds the pid that connected.
"""

import os
import socket
import struct
import sys


def main():
    path, account, program = sys.argv[1:4]
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    exec_done, exec_pending = os.pipe()  # neither inherited by exec: closed there
    if os.fork() == 0:
        os.close(exec_pending)
        os.read(exec_done, 1)  # end of file: the parent's exec closed the write end
        payload = ("tokenctl-agent/1 token\ngroup=\naccount=%s\n" % account).encode()
        connection.sendall(struct.pack(">I", len(payload)) + payload)
        answer = b""
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                break
            answer += chunk
        sys.stdout.buffer.write(answer[4:])
        sys.stdout.flush()
        os._exit(0)
    os.close(exec_done)
    os.execv(program, [program, "-c", "import time; time.sleep(4)"])


if __name__ == "__main__":
    main()
