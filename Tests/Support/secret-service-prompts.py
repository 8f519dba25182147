#!/usr/bin/python3
"""A stand-in Secret Service (org.freedesktop.secrets) that only unlocks, through a prompt
whose answer the test chooses, for the store's unlock flow (SecretServiceUnlock).

    secret-service-prompts.py

`Unlock` returns a prompt for any object (no object is unlocked at once); the prompt's
`Prompt` method returns, then the prompt completes with the answer the first object's
path ends in:

    .../allowed    Completed(false, []): unlocked
    .../dismissed  Completed(true, []): the user dismissed the dialog
    .../malformed  Completed("yes"): a body that is not the spec's (bv)

`Dismiss` completes nothing. `GetSecrets` answers every item with the spec's
`org.freedesktop.Secret.Error.IsLocked`, as a provider does for an item locked since it
was found. It exits when its bus goes away.
"""
import dbus
import dbus.lowlevel
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

NAME = "org.freedesktop.secrets"
SERVICE = "org.freedesktop.Secret.Service"
PROMPT = "org.freedesktop.Secret.Prompt"


class Prompt(dbus.service.Object):
    def __init__(self, bus, path, answer):
        super().__init__(bus, path)
        self.answer = answer

    @dbus.service.method(PROMPT, in_signature="s", out_signature="")
    def Prompt(self, window):
        # After the reply, as a provider's dialog answers later.
        GLib.idle_add(self.complete)

    @dbus.service.method(PROMPT, in_signature="", out_signature="")
    def Dismiss(self):
        pass

    def complete(self):
        if self.answer == "malformed":
            # By hand: dbus-python's signals are named after their method.
            message = dbus.lowlevel.SignalMessage(self.__dbus_object_path__, PROMPT, "Completed")
            message.append("yes", signature="s")
            self.connection.send_message(message)
        else:
            self.Completed(self.answer == "dismissed", dbus.Array([], signature="o"))
        return False

    @dbus.service.signal(PROMPT, signature="bv")
    def Completed(self, dismissed, result):
        pass


class Service(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/freedesktop/secrets")
        self.bus, self.prompts = bus, []

    @dbus.service.method(SERVICE, in_signature="ao", out_signature="aoo")
    def Unlock(self, objects):
        path = "/org/freedesktop/secrets/prompt/p%d" % len(self.prompts)
        self.prompts.append(Prompt(self.bus, path, str(objects[0]).rsplit("/", 1)[-1]))
        return (dbus.Array([], signature="o"), dbus.ObjectPath(path))

    @dbus.service.method(SERVICE, in_signature="aoo", out_signature="a{o(oayays)}")
    def GetSecrets(self, items, session):
        raise IsLocked("Cannot get secrets of a locked object")


class IsLocked(dbus.DBusException):
    _dbus_error_name = "org.freedesktop.Secret.Error.IsLocked"


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    loop = GLib.MainLoop()
    bus.call_on_disconnection(lambda _: loop.quit())
    service = Service(bus)
    # Owned after the object exists, so that the first call finds it.
    name = dbus.service.BusName(NAME, bus, do_not_queue=True)
    loop.run()
    del name, service


if __name__ == "__main__":
    main()
