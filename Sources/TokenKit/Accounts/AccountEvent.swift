/// Something that happened to an account, as NXOAuth2AccountStore announced with its
/// notifications. Carries the account, never a token.
public struct AccountEvent: Sendable, Hashable, CustomStringConvertible {
  public enum Kind: String, Sendable, Hashable, CaseIterable {
    /// A sign-in stored a new account or renewed an existing one.
    case added
    /// New tokens were stored after a refresh.
    case refreshed
    /// The refresh token was rejected; the user must sign in again.
    case needsSignIn = "needs-sign-in"
    /// The account was signed out (revoked remotely, or removed locally).
    case revoked
    /// A refresh or revocation failed for a reason that leaves the tokens as they were.
    case failed
  }

  public var kind: Kind
  public var account: Account
  /// For `.failed` and `.needsSignIn`: what went wrong, as the user would read it.
  public var message: String?

  public init(_ kind: Kind, _ account: Account, message: String? = nil) {
    self.kind = kind
    self.account = account
    self.message = message
  }

  public var description: String { "\(kind.rawValue) \(account.qualifiedName)" }
}
