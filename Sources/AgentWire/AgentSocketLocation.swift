#if !hasFeature(Embedded)
  // Embedded, the front end is one module of these sources (Sources/tokenctl-front-end).
  import XDGRuntime
#endif

/// Where the agent listens and clients look for it (tokenctl-agent(1)).
///
/// Each rule reads the environment through a lookup (`variable`): the front end's is
/// `getenv`, so that it builds no `[String: String]`, whose first instance in a process
/// costs a search of every protocol conformance the program has (a fifth
/// of the front end's instructions). The full program passes its context's dictionary.
public enum AgentSocketLocation {
  /// `TOKENCTL_AGENT_SOCKET`, else `agent.sock` in tokenctl's runtime directory:
  /// `runtime`, which is ``runtimeFolder(environment:)`` when the session has one and the
  /// lock folder's fallback (XDGDirectories, TokenAgent's `path(environment:)`) when not.
  public static func path(environment: [String: String], runtime: @autoclosure () -> String) -> String {
    if let path = environment[socketVariable], !path.isEmpty { return path }
    return runtime() + "/agent.sock"
  }

  /// The socket's path where it needs no more than the environment (the front end's case);
  /// nil where it lies in the fallback folder, which only the full program works out.
  public static func sessionPath(environment: [String: String]) -> String? {
    sessionPath { environment[$0] }
  }

  /// ``sessionPath(environment:)`` with the environment's `variable` lookup.
  public static func sessionPath(_ variable: (String) -> String?) -> String? {
    if let path = variable(socketVariable), !path.isEmpty { return path }
    return runtimeFolder(variable).map { $0 + "/agent.sock" }
  }

  /// The variable that names the socket.
  static let socketVariable = "TOKENCTL_AGENT_SOCKET"

  /// tokenctl's folder in the session's runtime directory, `$XDG_RUNTIME_DIR/tokenctl`;
  /// nil without one (``XDGRuntime``, the one rule for it, which XDGDirectories uses too).
  public static func runtimeFolder(environment: [String: String]) -> String? {
    runtimeFolder { environment[$0] }
  }

  /// ``runtimeFolder(environment:)`` with the environment's `variable` lookup.
  public static func runtimeFolder(_ variable: (String) -> String?) -> String? {
    XDGRuntime.tokenctlFolder(variable)
  }

  /// The lock file that lets one agent at a time serve `socket`.
  public static func lockPath(socket: String) -> String { socket + ".lock" }

  /// Whether the environment asks clients to leave the agent alone.
  public static func isDisabled(environment: [String: String]) -> Bool {
    isDisabled { environment[$0] }
  }

  /// ``isDisabled(environment:)`` with the environment's `variable` lookup.
  public static func isDisabled(_ variable: (String) -> String?) -> Bool {
    variable("TOKENCTL_AGENT") == "0"
  }
}
