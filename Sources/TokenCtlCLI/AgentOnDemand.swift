import AgentFrontEnd
import AgentProtocol
import ProcessRuntime
import TokenAgent

#if canImport(Glibc)
  import Glibc
#endif

/// Starting the agent when a client finds none, in a session without systemd, so
/// that tokenctl is fast by default there too, as gpg's tools start gpg-agent: the client does its own work as
/// always, and the agent it starts answers the next one.
///
/// Only where nothing else is the session's way to start it, and tokenctl is installed:
/// - the session has a runtime folder and the default socket (`TOKENCTL_AGENT_SOCKET` is
///   the user's own arrangement);
/// - no systemd user manager runs: where one does, `make install` enabled the socket unit,
///   which starts the agent, and a user who masked it turned the agent off;
/// - the agent's D-Bus service file is installed (`make install`, a package): a build
///   folder's tokenctl, and so the tests, start nothing;
/// - nothing listens on the socket now.
/// `TOKENCTL_AGENT=0` turns it off with the agent (the client asks no agent then).
enum AgentOnDemand {
  /// Starts the agent in the background when the rules above say so; never waits for it.
  static func startIfWanted(environment: [String: String]) {
    guard startReason(environment: environment) != nil else { return }
    var daemon = environment
    daemon.removeValue(forKey: "LISTEN_FDS")
    daemon.removeValue(forKey: "LISTEN_PID")
    _ = ChildProcess.startDaemon(["/proc/self/exe", "agent", "run"], environment: daemon)
  }

  /// Why the agent would be started here, or nil when it must not be.
  static func startReason(environment: [String: String]) -> String? {
    guard !AgentSocketLocation.isDisabled(environment: environment),
      environment["TOKENCTL_AGENT_SOCKET"].map(\.isEmpty) ?? true,
      let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"),
      let socket = AgentSocketLocation.sessionPath(environment: environment)
    else { return nil }
    guard access(runtime + "/systemd/private", F_OK) != 0 else { return nil }
    guard let service = installedService(environment: environment) else { return nil }
    // A full listen queue is an agent that takes no connection: starting another would
    // only find its lock taken.
    guard case .noAgent = AgentConnection.open(path: socket) else { return nil }
    return "no agent on \(socket), no systemd user manager, \(service) installed"
  }

  /// The agent's D-Bus service file in the session bus's service folders
  /// (`$XDG_DATA_HOME`, `$XDG_DATA_DIRS`, as the D-Bus specification lists them).
  static func installedService(environment: [String: String]) -> String? {
    let home = environment["HOME"] ?? ""
    let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/share"
    let dataDirs = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
      .split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
    for folder in [dataHome] + dataDirs {
      let path = folder + "/dbus-1/services/org.tokenctl.Agent.service"
      if access(path, R_OK) == 0 { return path }
    }
    return nil
  }
}
