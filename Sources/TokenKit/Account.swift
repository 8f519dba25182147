#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One signed-in identity at one account type, in one group.
///
/// Holds no secret: its tokens are a separate `TokenSet`, so an `Account` can be listed,
/// printed and logged freely.
public struct Account: Sendable, Hashable {
  /// The account type's id (`corp`).
  public var type: String
  /// A stable id for the identity, unique within the type: it does not change when the
  /// display name does. The sign-in flow derives it from the issuer and subject.
  public var id: String
  /// What a person calls the account (`ada@example.org`).
  public var name: String
  /// The group (namespace) the account lives in; tools sharing a group share accounts.
  public var group: String
  /// The scopes the account was authorized for.
  public var scopes: [String]
  public var createdAt: Date
  public var updatedAt: Date
  /// The issuer that vouched for the identity (`iss`), when known: refreshes of an account
  /// whose type discovers its endpoints go back to this issuer.
  public var issuer: String?
  /// The `client_id` the tokens were issued to. A refresh must present the same client
  /// (RFC 6749 §6), even after the account type's default client id changes.
  public var clientID: String?
  /// The origin of the token endpoint the account signed in at (`login.example.org` or
  /// `host:port`), for types whose endpoints are fixed rather than discovered from an
  /// issuer: its refresh token and client credentials go to no other server, whatever the
  /// type's settings name later (``ServiceConfiguration/requireRecordedIssuer(of:in:behavior:)``).
  public var authority: String?
  /// Set when the authorization server rejected the refresh token (`invalid_grant`): the
  /// account is kept, so the user sees it and signs in again, but no refresh is tried.
  public var needsSignIn: Bool
  /// Set when the account is the client itself, signed in with the client credentials
  /// grant (RFC 6749 §4.4). That grant issues no refresh token (§4.4.3): each new access
  /// token is asked for again with the client's credentials, so the account renews itself
  /// without one.
  public var isServiceAccount: Bool

  public init(
    type: String, id: String, name: String, group: String, scopes: [String] = [],
    createdAt: Date, updatedAt: Date, issuer: String? = nil, clientID: String? = nil,
    needsSignIn: Bool = false, isServiceAccount: Bool = false, authority: String? = nil
  ) {
    self.authority = authority
    self.type = type
    self.id = id
    self.name = name
    self.group = group
    self.scopes = scopes
    self.createdAt = createdAt
    self.updatedAt = updatedAt
    self.issuer = issuer
    self.clientID = clientID
    self.needsSignIn = needsSignIn
    self.isServiceAccount = isServiceAccount
  }

  /// The group used when none is given: tools that want to share sign-ins with each other
  /// and with the `tokenctl` command line use this one.
  public static let defaultGroup = "default"

  /// The account's key in its group.
  public var key: AccountKey { AccountKey(type: type, id: id) }

  /// How the user names this account on the command line: `type:name`.
  public var qualifiedName: String { "\(type):\(name)" }
}

/// What identifies an account within a group: its type and stable id.
public struct AccountKey: Sendable, Hashable, CustomStringConvertible {
  public var type: String
  public var id: String
  public init(type: String, id: String) {
    self.type = type
    self.id = id
  }
  public var description: String { "\(type):\(id)" }
}

/// An account together with its tokens, as a store loads it.
public struct StoredAccount: Sendable, Hashable {
  public var account: Account
  public var tokens: TokenSet
  public init(account: Account, tokens: TokenSet) {
    self.account = account
    self.tokens = tokens
  }

  /// Whether the stored access token may be handed out as it is, without the refresher:
  /// the account is not one the server declared in need of a new sign-in (its token is
  /// never handed out, whatever its expiry says), and the token stays valid for `seconds`
  /// more. The one rule every path that answers from a store follows (the command line,
  /// the git helper, the agent).
  ///
  /// Nor while a refresh of the account is in flight anywhere (its lock is held): the
  /// token may be revoked as soon as the refresh ends, so the caller waits for it through
  /// the refresher, which takes the lock and reads the store again. Nor while the locks'
  /// journal holds a newer grant than the store (``GrantJournal``): the server revoked
  /// this token when it rotated the refresh token, and the refresher writes the newer one
  /// into the store first.
  public func isServable(forAtLeast seconds: Double, clock: some WallClock, locks: some AccountLocking) -> Bool {
    isServable(tokens, forAtLeast: seconds, clock: clock, locks: locks)
  }

  /// The stored access token when it may be handed out as it is, nil when it must go
  /// through the refresher first: ``isServable(forAtLeast:clock:locks:)``, and the server
  /// the account signed in at still the one its type names
  /// (``AccountTypeRegistry/requireRecordedIssuer(of:)``), else an error. Every path that
  /// hands out a stored token calls this (the command line, the git helper, the agent from
  /// memory), so none can skip a condition.
  ///
  /// The issuer check throws rather than answering nil: the token is valid, but whoever
  /// holds it sends it to the server the type names now, which would learn it; a refresh
  /// would refuse for the same reason. `registry` is the registry with config.toml's
  /// settings applied, asked for only when the account recorded where it signed in, so a
  /// valid token of any other account reads no settings file.
  public func servableTokens(
    forAtLeast seconds: Double, clock: some WallClock, locks: some AccountLocking,
    registry: () throws -> AccountTypeRegistry
  ) throws -> TokenSet? {
    try servable(tokens, forAtLeast: seconds, clock: clock, locks: locks, registry: registry)
  }

  /// A token kept for other scopes than the account's own (`held`, from
  /// ``TokenStore/loadToken(for:scopes:)``) when it may be handed out, by the same
  /// conditions as the account's own token: it came from the same grant, so a server that
  /// declared the grant dead, a refresh in flight (whose rotation may revoke what the old
  /// refresh token issued), a newer grant in the journal and a moved issuer count for it too.
  public func servable(
    _ held: TokenSet?, forAtLeast seconds: Double, clock: some WallClock, locks: some AccountLocking,
    registry: () throws -> AccountTypeRegistry
  ) throws -> TokenSet? {
    guard let held, isServable(held, forAtLeast: seconds, clock: clock, locks: locks) else { return nil }
    if account.issuer != nil || account.authority != nil { try registry().requireRecordedIssuer(of: account) }
    return held
  }

  private func isServable(
    _ tokens: TokenSet, forAtLeast seconds: Double, clock: some WallClock, locks: some AccountLocking
  ) -> Bool {
    !account.needsSignIn && tokens.isValid(forAtLeast: seconds, clock: clock)
      && !locks.isHeld(account.key, group: account.group)
      && locks.journal?.contains(account.key, group: account.group) != true
  }
}

/// An account and the non-secret summary of its tokens, as a store lists it.
public struct AccountListing: Sendable, Hashable {
  public var account: Account
  public var tokens: TokenSummary
  public init(account: Account, tokens: TokenSummary) {
    self.account = account
    self.tokens = tokens
  }

  /// Whether a new access token can be had without the user: with the refresh token, or
  /// with the client's credentials for a service account.
  public var renewable: Bool { tokens.refreshable || account.isServiceAccount }
}
