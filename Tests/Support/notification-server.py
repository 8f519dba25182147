#!/usr/bin/python3
"""A stand-in desktop notification server (org.freedesktop.Notifications) for the tests.

Why not a real one: Debian's notification daemons (dunst, notification-daemon,
xfce4-notifyd) draw on an X11 or Wayland display and take the user's answer from a
pointer or, for dunst, a dmenu-style menu; a headless test can start one under Xvfb
but has no way to press an action button that is not a script standing in for the user
anyway. This server speaks the protocol's calls and signals (Notify, CloseNotification,
GetCapabilities, GetServerInformation; ActionInvoked, NotificationClosed) and lets the
test be the user:

    notification-server.py LOG [ANSWER [DELAY_MS | usr1 [keep]]]

It owns the name on the session bus of its environment, appends one JSON line per
notification to LOG (id, app_name, summary, body, actions), and, if ANSWER is given,
invokes the action of that key DELAY_MS milliseconds (default 100, a user's quick
click) after each notification that offers it, then closes the notification (reason 2,
dismissed by the user); with `usr1` instead of a delay, it answers the notifications
shown so far when it gets SIGUSR1, so that a test decides what happens first. With
`keep`, an answered notification stays on screen, as dunst 1.9 leaves it after
`dunstctl action`, until the client closes it. Without ANSWER, notifications stay until
closed. Each CloseNotification call appends the id it closes, one a line, to LOG.closed.
It exits when its bus goes away.
"""
import json
import signal
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"


class Server(dbus.service.Object):
    def __init__(self, bus, log, answer, delay, keep=False):
        super().__init__(bus, PATH)
        self.log, self.answer, self.delay, self.next, self.pending = log, answer, delay, 1, []
        self.keep = keep

    @dbus.service.method(NAME, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, icon, summary, body, actions, hints, timeout):
        notification = self.next
        self.next += 1
        keys = list(actions[0::2])
        with open(self.log, "a") as log:
            log.write(json.dumps({"id": notification, "app_name": str(app_name), "summary": str(summary),
                                  "body": str(body), "actions": [str(k) for k in keys]}) + "\n")
        if self.answer and self.answer in keys:
            if self.delay is None:
                self.pending.append(notification)
            else:
                GLib.timeout_add(self.delay, self.respond, notification)
        return dbus.UInt32(notification)

    def respond_to_pending(self):
        for notification in self.pending:
            self.respond(notification)
        self.pending = []
        return True

    def respond(self, notification):
        self.ActionInvoked(dbus.UInt32(notification), self.answer)
        if not self.keep:
            self.NotificationClosed(dbus.UInt32(notification), dbus.UInt32(2))
        return False

    @dbus.service.method(NAME, in_signature="u", out_signature="")
    def CloseNotification(self, notification):
        with open(self.log + ".closed", "a") as log:
            log.write(f"{int(notification)}\n")
        self.NotificationClosed(dbus.UInt32(notification), dbus.UInt32(3))

    @dbus.service.method(NAME, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["actions", "body"]

    @dbus.service.method(NAME, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("tokenctl-test-notifications", "tokenctl", "1", "1.2")

    @dbus.service.signal(NAME, signature="us")
    def ActionInvoked(self, notification, key):
        pass

    @dbus.service.signal(NAME, signature="uu")
    def NotificationClosed(self, notification, reason):
        pass


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    loop = GLib.MainLoop()
    bus.call_on_disconnection(lambda _: loop.quit())
    when = sys.argv[3] if len(sys.argv) > 3 else "100"
    server = Server(bus, sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None, None if when == "usr1" else int(when),
                    keep=len(sys.argv) > 4 and sys.argv[4] == "keep")
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, server.respond_to_pending)
    # Owned after the object exists, so that the first call finds it; held in a variable,
    # as the name is released when the object goes.
    name = dbus.service.BusName(NAME, bus, do_not_queue=True)
    loop.run()
    del name


if __name__ == "__main__":
    main()
