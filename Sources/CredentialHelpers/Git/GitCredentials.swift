/// git's own `get` through the agent: the request is the lines of git's that the agent reads
/// (AgentFrontEnd's `CredentialInput`), and the answer is git's, serialized.
public enum GitCredentials: ToolCredentialProtocol {
  public static let requestKind = "credential-get"

  /// `input`: git's request; one the command line refuses (no protocol or host, a line it
  /// cannot parse) is left to it.
  public static func question(_ field: (String) -> String?) -> ToolQuestion? {
    guard let input = field("input"), let message = try? CredentialMessage.parse(Array(input.utf8)),
      (try? message.requireProtocolAndHost()) != nil
    else { return nil }
    return ToolQuestion(message) { answer in try answer?.serialized() }
  }
}
