import TOMLReader
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension AccountTypeRegistry {
  /// The registry with the user's settings applied to the account types they name.
  ///
  /// For each type in `settings`: `clientID`, `clientSecret` and `scopes` replace the
  /// descriptor's; `issuer` turns a type that discovers its endpoints from a user-given
  /// issuer into one that discovers them from this issuer; `redirectPort` fixes the port
  /// of a loopback redirect. The changed descriptor is validated again, and its entry's
  /// source becomes `plugin OpenIDConnect + config.toml`, so `tokenctl types` shows both.
  ///
  /// - Parameter source: Names the settings' origin in errors and entry sources.
  /// - Throws: ``TokenKitError`` `unknownAccountType` for settings of a type that is not
  ///   registered, listing the known ones; `notConfigured` for a setting that does not
  ///   fit its type or is malformed; `invalidDescriptor` if the result is unusable.
  public func applying(
    _ settings: [String: AccountTypeSettings], source: String = "config.toml"
  ) throws
    -> AccountTypeRegistry
  {
    var registry = self
    // In id order, so that the same configuration always reports the same first error.
    for id in settings.keys.sorted() {
      guard let entry = self.entry(id), let typeSettings = settings[id] else {
        throw TokenKitError(
          .unknownAccountType, "\(source): there is no account type '\(id)' to configure",
          recovery: "Known types: \(ids.joined(separator: ", ")). Rename or remove the [types.\(id)] table.")
      }
      var descriptor = try Self.descriptor(entry.descriptor, applying: typeSettings, source: source)
      if !typeSettings.options.isEmpty {
        let declared = optionKeys(id)
        let known = AccountTypeSettings.keys + declared
        if let unknown = typeSettings.options.keys.sorted().first(where: { !declared.contains($0) }) {
          throw TokenKitError(
            .notConfigured, "\(source): [types.\(id)]: unknown key '\(unknown)'",
            recovery: "Known keys in [types.\(id)]: \(known.joined(separator: ", ")).")
        }
        do {
          descriptor = try configure(descriptor, options: typeSettings.options, for: id)
        } catch let error as TokenKitError {
          throw TokenKitError(.notConfigured, "\(source): [types.\(id)]: \(error.message)", recovery: error.recovery)
        }
      }
      let problems = descriptor.problems
      guard problems.isEmpty else {
        throw TokenKitError(
          .invalidDescriptor,
          "\(source): account type '\(id)' is invalid with its settings: " + problems.joined(separator: "; "))
      }
      try registry.replace(descriptor, source: entry.source + " + " + source)
    }
    return registry
  }

  private static func descriptor(
    _ original: EndpointDescriptor, applying settings: AccountTypeSettings, source: String
  ) throws -> EndpointDescriptor {
    var descriptor = original
    let id = original.id
    func problem(_ message: String, recovery: String? = nil) -> TokenKitError {
      TokenKitError(.notConfigured, "\(source): [types.\(id)]: \(message)", recovery: recovery)
    }

    if let clientID = settings.clientID {
      // RFC 6749 Appendix A.1: a client_id is VSCHAR, printable ASCII.
      guard OAuthSyntax.isVisibleASCII(clientID) else {
        throw problem("client_id must be non-empty printable ASCII (RFC 6749 Appendix A.1)")
      }
      descriptor.clientID = clientID
    }
    if let clientSecret = settings.clientSecret {
      // Appendix A.2 says the same of a client_secret; the message never shows it.
      guard OAuthSyntax.isVisibleASCII(clientSecret) else {
        throw problem("client_secret must be non-empty printable ASCII (RFC 6749 Appendix A.2)")
      }
      descriptor.clientSecret = clientSecret
    }
    if let scopes = settings.scopes {
      guard !scopes.isEmpty else {
        throw problem(
          "scopes is empty",
          recovery: "Remove scopes to use the defaults: \(original.defaultScopes.joined(separator: " ")).")
      }
      // RFC 6749 §3.3: scope-token = 1*NQCHAR, printable ASCII without space, '"' and '\'.
      for scope in scopes
      where !OAuthSyntax.isScopeToken(scope) {
        throw problem(
          "scope \(TOMLValue.quoted(scope)) is not a scope token: printable ASCII without spaces, '\"' or '\\' (RFC 6749 §3.3)"
        )
      }
      descriptor.defaultScopes = scopes
    }
    if let issuer = settings.issuer {
      switch original.endpoints {
      case .discoveredFromUserIssuer:
        descriptor.endpoints = .discovered(issuer: try Self.issuerURL(issuer, problem: problem))
      case .fixed:
        throw problem(
          "account type \(id) has fixed endpoints; issuer applies only to types that discover them from a user-given issuer",
          recovery: "Remove issuer from [types.\(id)].")
      case .discovered(let built):
        throw problem(
          "account type \(id) discovers its endpoints from \(built.absoluteString); issuer applies only to types that discover them from a user-given issuer",
          recovery: "Remove issuer from [types.\(id)].")
      }
    }
    if let parameters = settings.authorizationParameters {
      // The protocol's own parameters are tokenctl's to set, as in a type file.
      for name in parameters.keys.sorted()
      where DescriptorFile.protocolParameters.contains(name) || name.hasPrefix("code_") {
        throw problem(
          "authorization_parameters must not set \(name): tokenctl sets this protocol parameter itself",
          recovery: "Remove \(name) from authorization_parameters in [types.\(id)].")
      }
      descriptor.additionalAuthorizationParameters.merge(parameters) { $1 }
    }
    if let port = settings.redirectPort {
      guard port != 0 else { throw problem("redirect_port must be 1–65535") }
      switch original.redirect {
      case .loopback(let host, _, let path):
        descriptor.redirect = .loopback(host: host, port: port, path: path)
      case .manualPaste:
        throw problem(
          "account type \(id) does not redirect to a loopback address; redirect_port applies only to loopback redirects",
          recovery: "Remove redirect_port from [types.\(id)].")
      }
    }
    return descriptor
  }

  /// `text` as an issuer identifier: https, or http on a loopback host (RFC 8252 §8.3), with
  /// no query or fragment (RFC 8414 §2).
  private static func issuerURL(_ text: String, problem: (String, String?) -> TokenKitError) throws -> URL {
    guard let url = OAuthSyntax.issuerURL(text) else {
      throw problem(
        "issuer \(TOMLValue.quoted(text)) must be an https URL without query or fragment (http only on a loopback host)",
        "Use the issuer your provider documents, such as https://accounts.example.com.")
    }
    return url
  }
}
