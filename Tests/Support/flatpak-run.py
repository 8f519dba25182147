#!/usr/bin/python3
"""A stand-in for `flatpak run` in the tests: runs a command as the Flatpak app APP_ID
would run, in a bubblewrap sandbox that tokenctl's agent sees exactly as it sees a real
Flatpak app's.

    flatpak-run.py [--socket=session-bus] APP_ID COMMAND [ARG...]

Why not flatpak itself: an app needs a runtime (hundreds of megabytes from a remote) and
an installation, and the agent looks at neither. What the agent does look at is made as
flatpak 1.14 makes it (flatpak-run.c, flatpak-run-dbus.c):

- The instance's app info, a keyfile whose [Application] name is the app id.
- The session bus through xdg-dbus-proxy with `--filter --talk=org.tokenctl.Agent`, the
  policy of an app that asks for us (finish-args --talk-name). Flatpak runs the proxy
  outside the app's sandbox but in a bubblewrap of its own: every top-level directory of
  the host bound in (read-only but /tmp, /var and /run), and /.flatpak-info a 0600 file
  holding the app's info, so that services, which see the proxy's pid on the bus, can
  tell the app by /proc/PID/root/.flatpak-info. The proxy says it is listening by
  writing to --fd, and leaves when that pipe closes.
- The app in its sandbox: a mount namespace of its own whose root is a fresh tmpfs, with
  /usr and /etc read-only, /.flatpak-info the same info (--ro-bind-data), the proxy's
  socket at /run/flatpak/bus as DBUS_SESSION_BUS_ADDRESS, and a pid namespace of its own.
  With --socket=session-bus the app gets the bus itself instead, with no proxy.

Tests/Support is /app/bin in the sandbox, so `/usr/bin/python3 /app/bin/dbus-client.py`
is a desktop program of the app. flatpak-run.py exits with COMMAND's status, its output
being COMMAND's; the sandbox and the proxy die with it (--die-with-parent).
"""
import os
import secrets
import subprocess
import sys
import tempfile

PROXY = "/usr/bin/xdg-dbus-proxy"
BWRAP = "/usr/bin/bwrap"


def app_info(app_id, instance, proxied):
    """The keyfile flatpak writes to $XDG_RUNTIME_DIR/.flatpak/INSTANCE/info."""
    return "\n".join([
        "[Application]",
        f"name={app_id}",
        "runtime=runtime/org.freedesktop.Platform/x86_64/23.08",
        "",
        "[Instance]",
        f"instance-id={instance}",
        f"app-path=/var/lib/flatpak/app/{app_id}/x86_64/stable/active/files",
        "branch=stable",
        "arch=x86_64",
        "flatpak-version=1.14.4",
        f"session-bus-proxy={'true' if proxied else 'false'}",
        "system-bus-proxy=false",
        "",
        "[Context]",
        "shared=network;ipc;",
        f"sockets={'wayland;' if proxied else 'wayland;session-bus;'}",
        "",
    ])


def host_root_arguments():
    """Flatpak's add_bwrap_wrapper: the host's top-level directories and links, as they are."""
    arguments = []
    for entry in sorted(os.listdir("/")):
        if entry == ".flatpak-info":
            continue
        path = "/" + entry
        if os.path.islink(path):
            arguments += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            arguments += ["--bind" if entry in ("tmp", "var", "run") else "--ro-bind", path, path]
    return arguments


def unix_path(address):
    for part in address.split(":", 1)[1].split(","):
        if part.startswith("path="):
            return part[len("path="):]
    sys.exit("flatpak-run.py: the session bus is not at a unix:path= address: " + address)


def main():
    arguments = sys.argv[1:]
    proxied = True
    if arguments and arguments[0] == "--socket=session-bus":
        proxied = False
        arguments = arguments[1:]
    if len(arguments) < 2:
        sys.exit(__doc__)
    app_id, command = arguments[0], arguments[1:]
    bus = os.environ["DBUS_SESSION_BUS_ADDRESS"]
    runtime = os.environ["XDG_RUNTIME_DIR"]
    instance = str(secrets.randbelow(10**10))
    info_file = tempfile.TemporaryFile()
    info_file.write(app_info(app_id, instance, proxied).encode())
    info_file.flush()

    def info_fd():
        """A descriptor of the info from its start, for one --file or --ro-bind-data to read."""
        return os.open(f"/proc/self/fd/{info_file.fileno()}", os.O_RDONLY)

    proxy = None
    if proxied:
        proxy_dir = os.path.join(runtime, ".dbus-proxy")
        os.makedirs(proxy_dir, mode=0o755, exist_ok=True)
        socket = os.path.join(proxy_dir, f"session-bus-proxy-{instance}")
        ready_read, ready_write = os.pipe()
        proxy_info = info_fd()
        proxy = subprocess.Popen(
            [BWRAP] + host_root_arguments()
            + ["--bind", proxy_dir, proxy_dir, "--die-with-parent",
               "--perms", "0600", "--file", str(proxy_info), "/.flatpak-info", "--",
               PROXY, f"--fd={ready_write}", bus, socket, "--filter", "--talk=org.tokenctl.Agent"],
            pass_fds=(proxy_info, ready_write), stdin=subprocess.DEVNULL)
        os.close(proxy_info)
        os.close(ready_write)
        # The proxy writes one byte once it listens; nothing if it failed to start.
        if os.read(ready_read, 1) != b"x":
            sys.exit("flatpak-run.py: xdg-dbus-proxy did not start")
        bus_in_sandbox = ["--ro-bind", socket, "/run/flatpak/bus"]
    else:
        bus_in_sandbox = ["--ro-bind", unix_path(bus), "/run/flatpak/bus"]

    support = os.path.dirname(os.path.abspath(__file__))
    app_info_fd = info_fd()
    sandbox = [
        BWRAP, "--unshare-pid", "--die-with-parent", "--new-session",
        "--tmpfs", "/", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
        "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
        "--symlink", "usr/sbin", "/sbin", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
        "--dir", "/run/flatpak", "--ro-bind", support, "/app/bin",
        "--ro-bind-data", str(app_info_fd), "/.flatpak-info",
        "--clearenv", "--setenv", "PATH", "/app/bin:/usr/bin", "--setenv", "HOME", "/tmp",
        "--setenv", "FLATPAK_ID", app_id,
        "--setenv", "DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/flatpak/bus",
    ] + bus_in_sandbox + ["--"] + command
    status = subprocess.run(sandbox, pass_fds=(app_info_fd,), stdin=subprocess.DEVNULL).returncode
    if proxy is not None:
        # The pipe's read end closes with us, which ends the proxy; do not leave it behind.
        os.close(ready_read)
        try:
            proxy.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proxy.kill()
            proxy.wait()
    sys.exit(status)


if __name__ == "__main__":
    main()
