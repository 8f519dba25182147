import NativeAppSupport

/// Where the agent listens and clients look for it (tokenctl-agent(1)).
public enum AgentSocketLocation {
  /// `TOKENCTL_AGENT_SOCKET`, else `agent.sock` in tokenctl's runtime directory
  /// (`$XDG_RUNTIME_DIR/tokenctl`, with the lock folder's fallback when it is unset).
  public static func path(environment: [String: String]) -> String {
    if let path = environment["TOKENCTL_AGENT_SOCKET"], !path.isEmpty { return path }
    return XDGDirectories(environment: environment).runtime + "/agent.sock"
  }

  /// The lock file that lets one agent at a time serve `socket`.
  public static func lockPath(socket: String) -> String { socket + ".lock" }

  /// Whether the environment asks clients to leave the agent alone.
  public static func isDisabled(environment: [String: String]) -> Bool {
    environment["TOKENCTL_AGENT"] == "0"
  }
}
