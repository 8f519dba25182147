#!/usr/bin/python3
"""A stand-in Secret Service (org.freedesktop.secrets) with one unlocked item whose
secret it takes and whose attributes it refuses to set, for the write without GIO
(SecretServiceWireWrite) stopping after the secret.

    secret-service-refusing-attributes.py

`SearchItems` finds the item, `OpenSession("plain")` opens a session, the item's
`SetSecret` and `GetAll` answer as a provider's do, and its `Properties.Set` answers
`org.freedesktop.DBus.Error.AccessDenied`. `org.tokenctl.Test.Calls` returns the members
called so far, in order. It exits when its bus goes away.
"""
import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

NAME = "org.freedesktop.secrets"
SERVICE = "org.freedesktop.Secret.Service"
ITEM = "org.freedesktop.Secret.Item"
SESSION = "org.freedesktop.Secret.Session"
PROPERTIES = "org.freedesktop.DBus.Properties"
ITEM_PATH = "/org/freedesktop/secrets/collection/login/1"
SESSION_PATH = "/org/freedesktop/secrets/session/s1"
CALLS = []


class AccessDenied(dbus.DBusException):
    _dbus_error_name = "org.freedesktop.DBus.Error.AccessDenied"


class Session(dbus.service.Object):
    @dbus.service.method(SESSION, in_signature="", out_signature="")
    def Close(self):
        CALLS.append("Close")


class Item(dbus.service.Object):
    @dbus.service.method(ITEM, in_signature="(oayays)", out_signature="")
    def SetSecret(self, secret):
        CALLS.append("SetSecret")

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        CALLS.append("GetAll")
        attributes = dbus.Dictionary({"type": "graph"}, signature="ss")
        return {"Attributes": attributes, "Locked": False, "Modified": dbus.UInt64(1)}

    @dbus.service.method(PROPERTIES, in_signature="ssv", out_signature="")
    def Set(self, interface, name, value):
        CALLS.append("Set")
        raise AccessDenied("the attributes stay as they are")


class Service(dbus.service.Object):
    @dbus.service.method(SERVICE, in_signature="a{ss}", out_signature="aoao")
    def SearchItems(self, attributes):
        CALLS.append("SearchItems")
        return (dbus.Array([ITEM_PATH], signature="o"), dbus.Array([], signature="o"))

    @dbus.service.method(SERVICE, in_signature="sv", out_signature="vo")
    def OpenSession(self, algorithm, parameters):
        CALLS.append("OpenSession")
        return (dbus.String("", variant_level=1), dbus.ObjectPath(SESSION_PATH))

    @dbus.service.method("org.tokenctl.Test", in_signature="", out_signature="as")
    def Calls(self):
        return dbus.Array(CALLS, signature="s")


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    loop = GLib.MainLoop()
    bus.call_on_disconnection(lambda _: loop.quit())
    objects = [Service(bus, "/org/freedesktop/secrets"), Item(bus, ITEM_PATH), Session(bus, SESSION_PATH)]
    # Owned after the objects exist, so that the first call finds them.
    name = dbus.service.BusName(NAME, bus, do_not_queue=True)
    loop.run()
    del name, objects


if __name__ == "__main__":
    main()
