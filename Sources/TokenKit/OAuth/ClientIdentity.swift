#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A client as the token endpoint knows it: its id, its secret if it has one, and how it
/// presents them (RFC 6749 §2.3).
public struct ClientIdentity: Sendable, Hashable, CustomStringConvertible {
  /// `client_id`.
  public var id: String
  /// `client_secret`; never printed.
  public var secret: String?
  public var authentication: ClientAuthenticationMethod

  public init(id: String, secret: String? = nil, authentication: ClientAuthenticationMethod = .none) {
    self.id = id
    self.secret = secret
    // A secret without a method is posted in the body: servers that need it accept that,
    // and those that do not ignore it (RFC 6749 §2.3.1).
    self.authentication = secret != nil && authentication == .none ? .clientSecretPost : authentication
  }

  /// Adds the client's credentials to a request's form fields and headers.
  func authenticate(fields: inout [(String, String)], headers: inout [HTTPHeader]) {
    switch authentication {
    case .none:
      fields.append(("client_id", id))
    case .clientSecretPost:
      fields.append(("client_id", id))
      if let secret { fields.append(("client_secret", secret)) }
    case .clientSecretBasic:
      // §2.3.1: the id and secret are form-encoded before Basic encoding.
      let pair = FormEncoding.escape(id) + ":" + FormEncoding.escape(secret ?? "")
      headers.append(HTTPHeader("Authorization", "Basic " + Data(pair.utf8).base64EncodedString()))
    }
  }

  public var description: String {
    "ClientIdentity(\(id), secret: \(secret == nil ? "none" : "<redacted>"), \(authentication.rawValue))"
  }
}
