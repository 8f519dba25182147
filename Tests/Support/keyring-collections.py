#!/usr/bin/python3
"""Lists, locks and unlocks the Secret Service's collections, for the provider tests.

    keyring-collections.py list                 one line a collection: PATH<TAB>LABEL<TAB>locked|unlocked
    keyring-collections.py unlock [LABEL...]    Unlock (all, or those labelled), running the prompt
    keyring-collections.py lock [LABEL...]      Lock (all, or those labelled)
    keyring-collections.py alias NAME LABEL     Point the alias NAME (default) at the one labelled

The prompt is run as the Secret Service specifies (Prompt, then the Completed signal);
someone must answer it (Tests/Support/answer-keyring-prompts.sh). Exits 1 when a prompt was
dismissed.
"""
import sys
import time

import dbus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
SERVICE = "org.freedesktop.secrets"
service = dbus.Interface(bus.get_object(SERVICE, "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")


def collections():
    properties = dbus.Interface(bus.get_object(SERVICE, "/org/freedesktop/secrets"), dbus.PROPERTIES_IFACE)
    for path in properties.Get("org.freedesktop.Secret.Service", "Collections"):
        collection = dbus.Interface(bus.get_object(SERVICE, path), dbus.PROPERTIES_IFACE)
        yield str(path), str(collection.Get("org.freedesktop.Secret.Collection", "Label")), bool(
            collection.Get("org.freedesktop.Secret.Collection", "Locked"))


def run_prompt(path):
    if path == "/":
        return True
    loop = GLib.MainLoop()
    outcome = {}

    def completed(dismissed, result):
        outcome["dismissed"] = bool(dismissed)
        loop.quit()

    bus.add_signal_receiver(completed, "Completed", "org.freedesktop.Secret.Prompt", SERVICE, path)
    dbus.Interface(bus.get_object(SERVICE, path), "org.freedesktop.Secret.Prompt").Prompt("", timeout=3600)
    loop.run()
    return not outcome["dismissed"]


command, labels = sys.argv[1], sys.argv[2:]
chosen = [dbus.ObjectPath(path) for path, label, _ in collections() if not labels or label in labels]
if command == "list":
    for path, label, locked in collections():
        print(f"{path}\t{label}\t{'locked' if locked else 'unlocked'}")
elif command == "unlock":
    chosen = [dbus.ObjectPath(path) for path, label, locked in collections() if locked and (not labels or label in labels)]
    if not chosen:
        sys.exit(0)
    _, prompt = service.Unlock(chosen)
    sys.exit(0 if run_prompt(prompt) else 1)
elif command == "lock":
    # KeePassXC refuses to lock a database for a moment after a dialog of its own (the
    # prompt then reports itself dismissed): try again a few times.
    # It may also answer at once without locking anything: check the Locked property.
    for attempt in range(10):
        _, prompt = service.Lock(chosen)
        run_prompt(prompt)
        if all(locked for path, _, locked in collections() if path in chosen):
            sys.exit(0)
        time.sleep(0.5)
    sys.exit(1)
elif command == "alias":
    name, label = labels
    # KeePassXC lists a database a moment after it is opened.
    for attempt in range(20):
        found = [path for path, text, _ in collections() if text == label]
        if found:
            break
        time.sleep(0.5)
    else:
        sys.exit(f"keyring-collections.py: no collection labelled {label!r}")
    service.SetAlias(name, dbus.ObjectPath(found[0]))
else:
    sys.exit(f"keyring-collections.py: unknown command {command!r}")
