#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The non-secret facts about an account's tokens that `list` shows.
///
/// A store keeps these beside the secret so that listing accounts never reads a token.
public struct TokenSummary: Sendable, Hashable {
  /// When the access token expires; `nil` if it does not.
  public var expiresAt: Date?
  /// Whether a refresh token is stored.
  public var refreshable: Bool

  public init(expiresAt: Date?, refreshable: Bool) {
    self.expiresAt = expiresAt
    self.refreshable = refreshable
  }

  /// The state of the access token at the clock's now.
  public func status(clock: some WallClock) -> TokenStatus {
    guard let expiresAt else { return .noExpiry }
    let remaining = expiresAt.timeIntervalSince(clock.now)
    return remaining > 0 ? .valid(secondsLeft: Int(remaining)) : .expired
  }
}

/// Whether an access token can be used now.
public enum TokenStatus: Sendable, Hashable {
  case valid(secondsLeft: Int)
  case expired
  case noExpiry
}
