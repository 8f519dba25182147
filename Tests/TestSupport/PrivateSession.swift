import Foundation

/// A D-Bus session bus of the test's own, with or without a GNOME keyring on it, so that
/// a test can lock the keyring, restart its daemon or take the Secret Service away without
/// disturbing the shared test keyring. It goes away with `stop()`, and gnome-keyring-daemon
/// with it.
///
/// Starting one, and what it does to its keyring, waits for other processes: a test does it
/// with the async members (`started`, `run`, `lockLoginKeyring`…), which wait on threads of
/// their own; the synchronous ones are for code already on its own thread (an exit test's
/// process). A session belongs to one test at a time, hence `@unchecked Sendable`.
public final class PrivateSession: @unchecked Sendable {
  public enum Kind: Sendable {
    /// gnome-keyring-daemon, with its login keyring created and unlocked.
    case unlockedKeyring
    /// A bus with nothing on it: no Secret Service, and no service files to start one.
    case busWithoutSecretService
  }

  public let directory: URL
  /// Our environment, with the bus, HOME and the XDG directories of this session.
  public private(set) var environment: [String: String]
  /// The bus's daemon, when this process started it (see `init(attachingTo:)`).
  private let bus: TestProcess?
  /// The session's own agent, under `Tests/Support/with-agent.sh` (TOKENCTL_TEST_AGENT=1): the
  /// suite's agent is on another bus, and leaves this session's clients to their direct path.
  private var agent: TestProcess?
  private var stopped = false

  /// `services`: D-Bus service files (name → text) in the session's own data folder, which
  /// is XDG_DATA_DIRS in the session's environment: the bus starts those services, and
  /// only those, on their first call. `busOutput`: the file the bus daemon's standard
  /// output and error go to, which the services it starts inherit. `ownAgent`: false for
  /// a test of the agent the bus itself starts, which the session's own (under
  /// `with-agent.sh`) would stand in for.
  @available(*, noasync, message: "waits for the bus and the keyring: use PrivateSession.started")
  public init(
    _ kind: Kind, services: [String: String] = [:], busOutput: String = "/dev/null", ownAgent: Bool = true
  ) throws {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-session-\(UUID().uuidString)")
    let home = directory.appendingPathComponent("home"), runtime = directory.appendingPathComponent("runtime")
    for folder in [home, runtime] {
      try FileManager.default.createDirectory(
        at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
    // Our own configuration: like the standard session bus, but with no service
    // directories but the test's own, so nothing else is started behind the test's back.
    let data = directory.appendingPathComponent("share")
    let serviceFolder = data.appendingPathComponent("dbus-1/services")
    try FileManager.default.createDirectory(at: serviceFolder, withIntermediateDirectories: true)
    for (name, text) in services {
      try text.write(to: serviceFolder.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }
    let config = directory.appendingPathComponent("bus.conf")
    let socket = runtime.appendingPathComponent("bus")
    try """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>session</type>
      <listen>unix:path=\(socket.path)</listen>
      <auth>EXTERNAL</auth>
      <servicedir>\(serviceFolder.path)</servicedir>
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
    base["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
    base["XDG_CACHE_HOME"] = home.appendingPathComponent(".cache").path
    base["XDG_STATE_HOME"] = home.appendingPathComponent(".local/state").path
    base["XDG_DATA_DIRS"] = data.path
    base["NO_COLOR"] = "1"
    // Without an agent of its own, no agent of the suite's either: the session's clients,
    // and an agent its bus starts, use the session's own socket.
    if !ownAgent {
      base["TOKENCTL_AGENT_SOCKET"] = nil
      base["TOKENCTL_AGENT"] = nil
    }

    // In the foreground, as our child, so that `stop()` can end it; on a socket path we
    // chose, so there is no output to read.
    let bus = try TestProcess(
      "dbus-daemon", ["--config-file=\(config.path)", "--nofork"], environment: base, stdout: busOutput, stderr: nil)
    self.bus = bus
    let deadline = Date().addingTimeInterval(10)
    while !FileManager.default.fileExists(atPath: socket.path) {
      guard kill(bus.pid, 0) == 0, Date() < deadline else { throw TestFailure("dbus-daemon did not start") }
      usleep(10_000)
    }
    base["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(socket.path)"
    if kind == .unlockedKeyring {
      let keyring = try TestProcess.run(
        "gnome-keyring-daemon", ["--unlock", "--components=secrets"], environment: base, stdin: "tokenctl-test")
      guard keyring.status == 0 else { throw TestFailure("gnome-keyring-daemon failed: \(keyring.stderr)") }
      for line in keyring.stdout.split(separator: "\n") where line.hasPrefix("GNOME_KEYRING_CONTROL=") {
        base["GNOME_KEYRING_CONTROL"] = String(line.dropFirst("GNOME_KEYRING_CONTROL=".count))
      }
    }
    environment = base
    if kind == .unlockedKeyring {
      // gnome-keyring-daemon --unlock returns before the daemon owns its name on the bus.
      _ = try awaitSecretService(replacing: nil)
    }
    if ownAgent, ProcessInfo.processInfo.environment["TOKENCTL_TEST_AGENT"] == "1" { try startAgent() }
  }

  /// A new session, as `init` makes it, started on a thread of its own.
  public static func started(
    _ kind: Kind, services: [String: String] = [:], busOutput: String = "/dev/null", ownAgent: Bool = true
  ) async throws -> PrivateSession {
    try await onOwnThread { try PrivateSession(kind, services: services, busOutput: busOutput, ownAgent: ownAgent) }
  }

  /// Starts `tokenctl agent run` on this bus and points the session's clients at it.
  private func startAgent() throws {
    let socket = directory.appendingPathComponent("agent/agent.sock").path
    environment["TOKENCTL_AGENT_SOCKET"] = socket
    let agent = try TestProcess(
      TestProcess.tokenctl, ["agent", "run"], environment: environment,
      stdout: directory.appendingPathComponent("agent.log").path, stderr: nil)
    self.agent = agent
    let deadline = Date().addingTimeInterval(10)
    while !FileManager.default.fileExists(atPath: socket) {
      guard kill(agent.pid, 0) == 0, Date() < deadline else { throw TestFailure("the session's agent did not start") }
      usleep(10_000)
    }
  }

  /// The session another process started, whose `environment` it handed over: for an exit
  /// test's process, whose test starts and stops the session around it, so that the bus
  /// and its daemons go away even when that process crashes. `stop()` leaves it alone.
  public init(attachingTo environment: [String: String]) {
    self.environment = environment
    directory = URL(fileURLWithPath: environment["HOME"] ?? "/nonexistent").deletingLastPathComponent()
    bus = nil
  }

  /// Replaces gnome-keyring-daemon with a new one, as a restart of the user's session
  /// would (`--replace`), on the same keyring files, which it unlocks; returns once the
  /// new daemon owns `org.freedesktop.secrets`. Starts one on a bus that had none.
  @available(*, noasync)
  public func restartKeyring() throws {
    let previous = try secretServiceOwner()
    let keyring = try run(
      "gnome-keyring-daemon", ["--replace", "--unlock", "--components=secrets"], stdin: "tokenctl-test")
    guard keyring.status == 0 else { throw TestFailure("gnome-keyring-daemon --replace failed: \(keyring.stderr)") }
    _ = try awaitSecretService(replacing: previous)
  }

  /// Ends gnome-keyring-daemon with `signal` (SIGKILL: it dies without a word), leaving no
  /// Secret Service on the bus (it has no service files to start another); returns once
  /// its name is gone.
  @available(*, noasync)
  public func stopKeyring(signal: Int32 = SIGTERM) throws {
    guard let owner = try secretServiceOwner() else { return }
    let result = try run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
        "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", owner,
      ])
    // `(uint32 1234,)`
    guard let digits = result.stdout.split(separator: " ").last?.prefix(while: \.isNumber), let pid = pid_t(digits)
    else {
      throw TestFailure("no process ID for \(owner): \(result.stdout) \(result.stderr)")
    }
    kill(pid, signal)
    let deadline = Date().addingTimeInterval(10)
    while try secretServiceOwner() != nil {
      guard Date() < deadline else { throw TestFailure("gnome-keyring-daemon did not leave the bus") }
      usleep(20_000)
    }
  }

  /// The unique bus name of the process that owns `org.freedesktop.secrets`, if any.
  @available(*, noasync)
  public func secretServiceOwner() throws -> String? {
    let result = try run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
        "--method", "org.freedesktop.DBus.GetNameOwner", "org.freedesktop.secrets",
      ])
    // `(':1.3',)`
    guard result.status == 0, let start = result.stdout.firstIndex(of: "'") else { return nil }
    let rest = result.stdout[result.stdout.index(after: start)...]
    return rest.firstIndex(of: "'").map { String(rest[..<$0]) }
  }

  /// Waits until a process other than `previous` owns `org.freedesktop.secrets`.
  private func awaitSecretService(replacing previous: String?) throws -> String {
    let deadline = Date().addingTimeInterval(10)
    while true {
      if let owner = try secretServiceOwner(), owner != previous { return owner }
      guard Date() < deadline else { throw TestFailure("gnome-keyring-daemon did not join the bus") }
      usleep(20_000)
    }
  }

  /// Runs another program on this bus.
  @available(*, noasync)
  public func run(_ executable: String, _ arguments: [String], stdin: String = "") throws -> ProcessResult {
    try TestProcess.run(executable, arguments, environment: environment, stdin: stdin)
  }

  /// Runs another program on this bus, waiting for it on a thread of its own.
  public func run(_ executable: String, _ arguments: [String], stdin: String = "") async throws -> ProcessResult {
    try await TestProcess.run(executable, arguments, environment: environment, stdin: stdin)
  }

  /// `restartKeyring()`, waiting on a thread of its own.
  public func restartKeyring() async throws { try await onOwnThread { try self.restartKeyring() } }

  /// `stopKeyring(signal:)`, waiting on a thread of its own.
  public func stopKeyring(signal: Int32 = SIGTERM) async throws {
    try await onOwnThread { try self.stopKeyring(signal: signal) }
  }

  /// `lockLoginKeyring()`, waiting on a thread of its own.
  public func lockLoginKeyring() async throws { try await onOwnThread { try self.lockLoginKeyring() } }

  /// Locks the login keyring through the Secret Service's own `Lock` method.
  ///
  /// Not `secret-tool lock`: Debian 12's (libsecret 0.20.5) fails a GLib assertion and
  /// then waits forever when given the collection's path, and crashes when given `login`.
  @available(*, noasync)
  public func lockLoginKeyring() throws {
    let result = try run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
        "--method", "org.freedesktop.Secret.Service.Lock", "['/org/freedesktop/secrets/collection/login']",
      ])
    guard result.status == 0 else { throw TestFailure("Lock failed: \(result.stderr)") }
  }

  /// Stops the bus (gnome-keyring-daemon leaves when its bus goes), and removes the files
  /// once it has gone, on a thread of its own: `stop()` itself does not wait.
  public func stop() {
    guard !stopped, let bus else { return }
    stopped = true
    let agent = agent, directory = directory
    if let agent { kill(agent.pid, SIGTERM) }
    Thread.detachNewThread {
      if let agent { agent.wait() }
      kill(bus.pid, SIGTERM)
      bus.wait()
      try? FileManager.default.removeItem(at: directory)
    }
  }

  deinit { stop() }
}
