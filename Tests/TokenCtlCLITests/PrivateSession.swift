import Foundation

/// A D-Bus session bus of the test's own, with or without a GNOME keyring on it, so that
/// a test can lock the keyring or take the Secret Service away without disturbing the
/// shared test keyring. It goes away with `stop()`, and gnome-keyring-daemon with it.
final class PrivateSession {
  enum Kind {
    /// gnome-keyring-daemon, with its login keyring created and unlocked.
    case unlockedKeyring
    /// A bus with nothing on it: no Secret Service, and no service files to start one.
    case busWithoutSecretService
  }

  let directory: URL
  let environment: [String: String]
  private let busPID: Int32

  init(_ kind: Kind) throws {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-session-\(UUID().uuidString)")
    let home = directory.appendingPathComponent("home"), runtime = directory.appendingPathComponent("runtime")
    for folder in [home, runtime] {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
    // Our own configuration: like the standard session bus, but with no service
    // directories, so nothing is started behind the test's back.
    let config = directory.appendingPathComponent("bus.conf")
    try """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>session</type>
      <listen>unix:dir=\(runtime.path)</listen>
      <auth>EXTERNAL</auth>
      <policy context="default">
        <allow send_destination="*" eavesdrop="true"/>
        <allow eavesdrop="true"/>
        <allow own="*"/>
      </policy>
    </busconfig>
    """.write(to: config, atomically: true, encoding: .utf8)

    var base = ProcessInfo.processInfo.environment
    for name in ["DBUS_SESSION_BUS_ADDRESS", "GNOME_KEYRING_CONTROL", "DISPLAY", "WAYLAND_DISPLAY", "TOKENCTL_GROUP"] {
      base[name] = nil
    }
    base["HOME"] = home.path
    base["XDG_RUNTIME_DIR"] = runtime.path
    base["XDG_DATA_HOME"] = home.appendingPathComponent(".local/share").path
    base["NO_COLOR"] = "1"

    let bus = try ProcessRunner.run(
      "dbus-daemon", ["--config-file=\(config.path)", "--fork", "--print-address=1", "--print-pid=1"],
      environment: base)
    let lines = bus.stdout.split(separator: "\n").map(String.init)
    guard bus.status == 0, lines.count >= 2, let pid = Int32(lines[1]) else {
      throw SessionError("dbus-daemon did not start: \(bus.stderr)")
    }
    busPID = pid
    base["DBUS_SESSION_BUS_ADDRESS"] = lines[0]
    if kind == .unlockedKeyring {
      let keyring = try ProcessRunner.run(
        "gnome-keyring-daemon", ["--unlock", "--components=secrets"], environment: base, stdin: "tokenctl-test")
      guard keyring.status == 0 else { throw SessionError("gnome-keyring-daemon failed: \(keyring.stderr)") }
      for line in keyring.stdout.split(separator: "\n") where line.hasPrefix("GNOME_KEYRING_CONTROL=") {
        base["GNOME_KEYRING_CONTROL"] = String(line.dropFirst("GNOME_KEYRING_CONTROL=".count))
      }
    }
    environment = base
  }

  /// Runs `tokenctl` with `arguments` on this bus.
  func tokenctl(_ arguments: String...) throws -> ProcessResult {
    try ProcessRunner.run(ProcessRunner.tokenctl, arguments, environment: environment)
  }

  /// Runs another program on this bus.
  func run(_ executable: String, _ arguments: [String], stdin: String = "") throws -> ProcessResult {
    try ProcessRunner.run(executable, arguments, environment: environment, stdin: stdin)
  }

  /// Locks the login keyring through the Secret Service's own `Lock` method.
  func lockLoginKeyring() throws {
    let result = try run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
        "--method", "org.freedesktop.Secret.Service.Lock", "['/org/freedesktop/secrets/collection/login']",
      ])
    guard result.status == 0 else { throw SessionError("Lock failed: \(result.stderr)") }
  }

  func stop() {
    kill(busPID, SIGTERM)
    try? FileManager.default.removeItem(at: directory)
  }

  deinit { stop() }
}

struct SessionError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
