#!/usr/bin/python3
"""A desktop program of the tests: asks tokenctl's agent over D-Bus with dbus-python,
a maintained D-Bus library (Debian's python3-dbus), as a Python application would.

    dbus-client.py token GROUP ACCOUNT MIN_VALID   prints {"token": ..., "expires_at": ...}
    dbus-client.py list GROUP                      prints the accounts as JSON
    dbus-client.py watch SECONDS [GROUP]           prints each signal of the agent as a JSON line;
                                                lists GROUP's accounts first (default
                                                "default"), since the agent signals only to
                                                connections that called it and may see them
    dbus-client.py bench N GROUP ACCOUNT           N GetAccessToken calls on one connection:
                                                prints {"median_ms": ..., "p99_ms": ...}

An error prints {"error": NAME, "message": ...} and exits 1.
"""
import json
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

NAME, PATH, INTERFACE = "org.tokenctl.Agent", "/org/tokenctl/Agent", "org.tokenctl.Agent1"


def agent(bus):
    return dbus.Interface(bus.get_object(NAME, PATH), INTERFACE)


def plain(value):
    if isinstance(value, (dbus.Boolean,)):
        return bool(value)
    if isinstance(value, (dbus.Int64, dbus.UInt32, dbus.Int32)):
        return int(value)
    return str(value)


def main():
    command = sys.argv[1]
    try:
        if command == "token":
            token, expires = agent(dbus.SessionBus()).GetAccessToken(sys.argv[2], sys.argv[3], int(sys.argv[4]))
            print(json.dumps({"token": str(token), "expires_at": int(expires)}))
        elif command == "list":
            accounts = agent(dbus.SessionBus()).ListAccounts(sys.argv[2])
            print(json.dumps([{str(k): plain(v) for k, v in account.items()} for account in accounts]))
        elif command == "watch":
            dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
            bus = dbus.SessionBus()

            def heard(*arguments, **keywords):
                print(json.dumps({"signal": keywords["member"], "args": [str(a) for a in arguments]}), flush=True)

            bus.add_signal_receiver(heard, dbus_interface=INTERFACE, path=PATH, member_keyword="member")
            try:
                agent(bus).ListAccounts(sys.argv[3] if len(sys.argv) > 3 else "")
            except dbus.DBusException:
                pass  # Refused: then no signal names an account to this connection either.
            print(json.dumps({"watching": True}), flush=True)
            loop = GLib.MainLoop()
            GLib.timeout_add(int(float(sys.argv[2]) * 1000), loop.quit)
            loop.run()
        elif command == "bench":
            count, group, account = int(sys.argv[2]), sys.argv[3], sys.argv[4]
            proxy = agent(dbus.SessionBus())
            proxy.GetAccessToken(group, account, 0)
            times = []
            for _ in range(count):
                start = time.perf_counter()
                proxy.GetAccessToken(group, account, 0)
                times.append((time.perf_counter() - start) * 1000)
            times.sort()
            print(json.dumps({"median_ms": times[len(times) // 2], "p99_ms": times[min(len(times) - 1, int(len(times) * 0.99))]}))
        else:
            sys.exit("unknown command " + command)
    except dbus.DBusException as error:
        print(json.dumps({"error": error.get_dbus_name(), "message": error.get_dbus_message()}))
        sys.exit(1)


if __name__ == "__main__":
    main()
