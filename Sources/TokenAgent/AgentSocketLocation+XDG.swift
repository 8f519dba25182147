import AgentProtocol
import NativeAppSupport

extension AgentSocketLocation {
  /// `TOKENCTL_AGENT_SOCKET`, else `agent.sock` in tokenctl's runtime directory
  /// (`$XDG_RUNTIME_DIR/tokenctl`, with the lock folder's fallback when it is unset).
  public static func path(environment: [String: String]) -> String {
    path(environment: environment, runtime: XDGDirectories(environment: environment).runtime)
  }
}
