#!/usr/bin/python3
"""A bus client that asks org.tokenctl.Agent for a token, then execs another program that
asks again on the same connection: the agent must tell the second call
by the program that makes it, not by what it found for the connection's first.

    dbus-exec-client.py ACCOUNT NEXT_PYTHON

connects to $DBUS_SESSION_BUS_ADDRESS (unix:path= only), calls GetAccessToken('', ACCOUNT,
0), then execs NEXT_PYTHON (a Python interpreter, a copy at another path) on this script
with the connection's descriptor, which calls again. Each prints one JSON line:
{"token": ...} or {"error": NAME}. Plain sockets, no D-Bus library, so that the connection
survives exec: D-Bus asks nothing of a client's serials but that they be non-zero.
"""
import json
import os
import socket
import struct
import sys


def pad(data, boundary):
    return data + b"\0" * (-len(data) % boundary)


def string(value, length_format="<I"):
    encoded = value.encode()
    return struct.pack(length_format, len(encoded)) + encoded + b"\0"


def call(sock, serial, account):
    body = pad(string(""), 4) + pad(string(account), 4) + struct.pack("<I", 0)
    fields = b""
    for code, signature, value in [
        (1, "o", "/org/tokenctl/Agent"),
        (2, "s", "org.tokenctl.Agent1"),
        (3, "s", "GetAccessToken"),
        (6, "s", "org.tokenctl.Agent"),
        (8, "g", "ssu"),
    ]:
        fields = pad(fields, 8)
        encoded = string(value, "<B") if signature == "g" else string(value)
        fields += bytes([code]) + string(signature, "<B") + encoded
    header = b"l\x01\x00\x01" + struct.pack("<III", len(body), serial, len(fields)) + fields
    sock.sendall(pad(header, 8) + body)


def receive(sock, buffered):
    """The next message: (type, reply serial, error name, body), and what was read past it."""
    while True:
        while len(buffered) < 16:
            chunk = sock.recv(65536)
            if not chunk:
                raise SystemExit("the bus closed the connection")
            buffered += chunk
        body_length, _, fields_length = struct.unpack_from("<III", buffered, 4)
        total = len(pad(b"\0" * (16 + fields_length), 8)) + body_length
        while len(buffered) < total:
            buffered += sock.recv(65536)
        message, buffered = buffered[:total], buffered[total:]
        kind = message[1]
        offset, end = 16, 16 + fields_length
        reply, error = None, None
        while offset < end:
            offset += -offset % 8
            code, sig_length = message[offset], message[offset + 1]
            signature = message[offset + 2:offset + 2 + sig_length].decode()
            offset += 3 + sig_length
            if signature in ("s", "o"):
                offset += -offset % 4
                (length,) = struct.unpack_from("<I", message, offset)
                value = message[offset + 4:offset + 4 + length].decode()
                offset += 5 + length
            elif signature == "g":
                length = message[offset]
                value = message[offset + 1:offset + 1 + length].decode()
                offset += 2 + length
            else:  # u
                offset += -offset % 4
                (value,) = struct.unpack_from("<I", message, offset)
                offset += 4
            if code == 5:
                reply = value
            elif code == 4:
                error = value
        body = message[len(pad(b"\0" * end, 8)):]
        if kind in (2, 3):
            return (kind, reply, error, body), buffered


def ask(sock, serial, account):
    call(sock, serial, account)
    buffered = b""
    while True:
        (kind, reply, error, body), buffered = receive(sock, buffered)
        if reply != serial:
            continue
        if kind == 3:
            return {"error": error}
        (length,) = struct.unpack_from("<I", body, 0)
        return {"token": body[4:4 + length].decode()}


def main():
    if sys.argv[1] == "--continue":
        sock = socket.socket(fileno=int(sys.argv[2]))
        print(json.dumps(ask(sock, 100, sys.argv[3])), flush=True)
        return
    account, next_python = sys.argv[1], sys.argv[2]
    address = os.environ["DBUS_SESSION_BUS_ADDRESS"]
    path = address.split("unix:path=", 1)[1].split(",", 1)[0]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    sock.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
    if not sock.recv(4096).startswith(b"OK"):
        raise SystemExit("the bus refused EXTERNAL authentication")
    sock.sendall(b"BEGIN\r\n")
    fields = b""
    for code, value in [(1, "/org/freedesktop/DBus"), (2, "org.freedesktop.DBus"), (3, "Hello"),
                        (6, "org.freedesktop.DBus")]:
        fields = pad(fields, 8)
        fields += bytes([code]) + string("o" if code == 1 else "s", "<B") + string(value)
    hello = b"l\x01\x00\x01" + struct.pack("<III", 0, 1, len(fields)) + fields
    sock.sendall(pad(hello, 8))
    buffered = b""
    while True:
        (kind, reply, _, _), buffered = receive(sock, buffered)
        if reply == 1:
            break
    print(json.dumps(ask(sock, 2, account)), flush=True)
    os.set_inheritable(sock.fileno(), True)
    os.execv(next_python, [next_python, __file__, "--continue", str(sock.fileno()), account])


main()
