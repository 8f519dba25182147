import AgentProtocol
import TokenAgent

#if canImport(Glibc)
  import Glibc
#endif

/// Whether the agent runs. Commands do the work themselves without one, so an agent that
/// is not running is fine; a socket left behind by one that died is only a warning, as
/// the next `agent start` replaces it.
enum AgentCheck {
  static func check(environment: [String: String]) -> DoctorCheck {
    let id = "agent"
    let title = "Agent"
    let path = AgentSocketLocation.path(environment: environment)
    if AgentSocketLocation.isDisabled(environment: environment) {
      return .ok(id, title, "not asked (TOKENCTL_AGENT=0): commands do the work themselves")
    }
    if let status = AgentStatusQuery.ask(path) {
      if let host = status[AgentMessage.forwardedHostField] {
        return .ok(
          id, title,
          "forwarded over ssh (socket \(path)): the agent of the machine you connected from answers, which knows "
            + "this host as \(host); it hands out tokens of the accounts allowed for \(host) there, and signs in nowhere "
            + "but there")
      }
      return .ok(id, title, "running (pid \(status["pid"] ?? "?"), socket \(path))")
    }
    var info = stat()
    guard lstat(path, &info) == 0 else {
      return .ok(id, title, "not running: commands do the work themselves, slower; \(howToStart(environment))")
    }
    // Someone listens there: a live socket is never one to remove, whatever it answered.
    if case .connected = AgentConnection.open(path: path) {
      return .warn(
        id, title, "\(path) is live, but what listens there did not answer as tokenctl's agent does",
        fix: "See which program serves it: `ss -xlp src \(path)`.")
    }
    return .warn(
      id, title,
      "not running, but \(path) is left from an agent that is gone: each command tries it before doing the work itself",
      fix: "Run `tokenctl agent start` (it replaces the stale socket), or remove it: `rm \(path)`.")
  }

  /// The agent's socket unit where `make install` put it for the user's systemd (it enables
  /// it for every session), else `tokenctl agent start`: a hint that runs as printed.
  static func howToStart(_ environment: [String: String]) -> String {
    let runtime = environment["XDG_RUNTIME_DIR"] ?? ""
    let home = environment["HOME"] ?? ""
    let unitFolders = [
      home + "/.config/systemd/user", "/etc/systemd/user", "/usr/local/lib/systemd/user", "/usr/lib/systemd/user",
    ]
    var info = stat()
    let userManager = !runtime.isEmpty && stat(runtime + "/systemd/private", &info) == 0
    if userManager, unitFolders.contains(where: { access($0 + "/tokenctl-agent.socket", R_OK) == 0 }) {
      return "`systemctl --user start tokenctl-agent.socket` starts it when first asked (from the next login, "
        + "every session does)"
    }
    return "`tokenctl agent start` starts it, and keeps tokens fresh ahead of time"
  }
}
