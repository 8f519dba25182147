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
      return .ok(id, title, "running (pid \(status["pid"] ?? "?"), socket \(path))")
    }
    var info = stat()
    guard lstat(path, &info) == 0 else {
      return .ok(
        id, title,
        "not running: commands do the work themselves (`tokenctl agent start` keeps tokens fresh ahead of time)")
    }
    return .warn(
      id, title,
      "not running, but \(path) is left from an agent that is gone: each command tries it before doing the work itself",
      fix: "Run `tokenctl agent start` (it replaces the stale socket), or remove it: `rm \(path)`.")
  }
}
