#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One answer of cargo's credential provider protocol, version 1: `{"Ok":{…}}` or
/// `{"Err":{…}}`, the serde encoding of the `cargo-credential` crate's `Result`. In one
/// place for the command line's direct path and the agent, which writes it for the front
/// end to print as it came.
public enum CargoCredentialResponse: Encodable, Sendable {
  /// `get`'s answer: the token, and until when cargo may keep it (`cache: "expires"` with
  /// `expiration` in Unix seconds), else for this cargo process alone (`"session"`).
  case token(String, expiration: Int?)
  /// The provider serves no registry at this URL: cargo tries its next provider.
  case urlNotSupported
  /// No credential for the registry here: cargo tries its next provider.
  case notFound
  /// This provider does not do what was asked (`login`, `logout`).
  case operationNotSupported
  /// A failure cargo shows the user and stops at.
  case other(String)

  private struct Token: Encodable {
    var kind = "get"
    var token: String
    var cache: String
    var expiration: Int?
    /// The one token serves reading, publishing and yanking alike.
    var operationIndependent = true

    enum CodingKeys: String, CodingKey {
      case kind, token, cache, expiration
      case operationIndependent = "operation_independent"
    }
  }

  private struct Failure: Encodable {
    var kind: String
    var message: String?
  }

  private enum CodingKeys: String, CodingKey {
    case ok = "Ok"
    case err = "Err"
  }

  /// The hello a provider writes before cargo writes anything: the versions it speaks.
  public static let hello = "{\"v\":[1]}\n"

  /// The answer as its JSON line.
  public var line: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Strings and numbers only: encoding cannot fail.
    return String(decoding: try! encoder.encode(self), as: UTF8.self) + "\n"
  }

  /// `get`'s answer from git's: registries take an OAuth token as a bearer token (RFC
  /// 6750), and cargo sends the token as the whole `Authorization` value.
  public static func token(_ answer: CredentialMessage) -> CargoCredentialResponse {
    .token("Bearer " + (answer["password"] ?? ""), expiration: answer["password_expiry_utc"].flatMap { Int($0) })
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    switch self {
    case .token(let token, let expiration):
      try container.encode(
        Token(token: token, cache: expiration == nil ? "session" : "expires", expiration: expiration), forKey: .ok)
    case .urlNotSupported: try container.encode(Failure(kind: "url-not-supported"), forKey: .err)
    case .notFound: try container.encode(Failure(kind: "not-found"), forKey: .err)
    case .operationNotSupported: try container.encode(Failure(kind: "operation-not-supported"), forKey: .err)
    case .other(let message): try container.encode(Failure(kind: "other", message: message), forKey: .err)
    }
  }
}
