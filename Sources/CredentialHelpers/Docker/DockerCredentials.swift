#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Docker's credential-helper protocol's `get` answer (docker-credential-helpers,
/// `credentials.Credentials`), written in one place for the command line's direct path
/// and the agent, which writes it for the front end to print as it came.
public enum DockerCredentials: ToolCredentialProtocol {
  public static let requestKind = "docker-get"

  /// What the protocol's clients match to tell "no credentials" from a failure
  /// (docker-credential-helpers, `credentials.NewErrCredentialsNotFound`).
  public static let notFound = "credentials not found in native keychain"

  struct Credentials: Encodable {
    var serverURL: String
    var username: String
    var secret: String

    enum CodingKeys: String, CodingKey {
      case serverURL = "ServerURL"
      case username = "Username"
      case secret = "Secret"
    }
  }

  /// `get`'s JSON line for `server` (the registry as the tool wrote it) from git's answer,
  /// or nil when that holds no password: no account serves the registry.
  public static func answer(_ message: CredentialMessage?, server: String) -> String? {
    guard let message, let secret = message["password"] else { return nil }
    let encoder = JSONEncoder()
    // Docker's own helpers write "/" as it is; sorted keys keep the bytes one answer.
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Three strings: encoding cannot fail.
    let data = try! encoder.encode(
      Credentials(serverURL: server, username: message["username"] ?? "", secret: secret))
    return String(decoding: data, as: UTF8.self) + "\n"
  }

  /// `server`: the registry as the tool wrote it.
  public static func question(_ field: (String) -> String?) -> ToolQuestion? {
    guard let server = field("server"), let message = CredentialMessage(requestFor: server) else { return nil }
    return ToolQuestion(message) { answer($0, server: server) }
  }
}
