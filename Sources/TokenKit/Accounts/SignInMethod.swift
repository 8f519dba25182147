#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How a sign-in obtains its grant.
public enum SignInMethod: Sendable {
  /// The authorization code grant with PKCE (RFC 6749 §4.1, RFC 7636): `receiver` catches
  /// the redirect (a loopback listener, or the user pasting it with `bareCodeAllowed`),
  /// `presentURL` prints the URL and opens the browser.
  case browser(
    receiver: any RedirectReceiver, bareCodeAllowed: Bool = false,
    presentURL: @Sendable (URL) async -> Void)
  /// The device authorization grant (RFC 8628): `present` shows the code and the time
  /// left before each poll; `sleep` waits between polls.
  case device(
    present: @Sendable (DeviceAuthorizationResponse, Int) async -> Void,
    sleep: @Sendable (Double) async throws -> Void = { try await Task.sleep(for: .seconds($0)) })
  /// The client credentials grant (RFC 6749 §4.4), for a confidential client acting as
  /// itself: the account is the client.
  case clientCredentials

  /// Tells the browser's page, if one still waits, how the sign-in ended
  /// (``RedirectReceiver/finish(_:)``).
  public func finish(_ ending: SignInEnding) {
    if case .browser(let receiver, _, _) = self { receiver.finish(ending) }
  }

  var isClientCredentials: Bool {
    if case .clientCredentials = self { return true }
    return false
  }
}

/// What a sign-in asks for beyond the account type's defaults.
public struct SignInOptions: Sendable {
  /// Scopes to request instead of the type's default scopes.
  public var scopes: [String]?
  /// A client id to use instead of the type's.
  public var clientID: String?
  /// The secret of that client, when it has one (a registered client the server made
  /// confidential, RFC 7591 §3.2.1).
  public var clientSecret: String?
  /// When tokenctl registered that client (RFC 7591), when it did: a refusal of a client
  /// registered moments ago is asked once more (``RecentRegistration``).
  public var clientRegisteredAt: Date?
  /// The issuer, for types that discover their endpoints from one the user names.
  public var issuer: String?
  /// How long the user has to finish in the browser, or to approve a device sign-in (at
  /// most the device code's own lifetime).
  public var timeout: Duration
  /// The user to sign in as, sent as `login_hint` (OpenID Connect Core §3.1.2.1): a person
  /// signed in at the server as several users is not asked to pick. Servers that do not
  /// know the parameter ignore it (RFC 6749 §3.1).
  public var loginHint: String?
  /// The kept account this sign-in repairs (`tokenctl login ACCOUNT`), nil for a new one:
  /// the account type may steer the server to that user (``AccountTypeBehavior``).
  public var signingInAgain: Account?

  public init(
    scopes: [String]? = nil, clientID: String? = nil, issuer: String? = nil, timeout: Duration = .seconds(300)
  ) {
    self.scopes = scopes
    self.clientID = clientID
    self.issuer = issuer
    self.timeout = timeout
  }
}
