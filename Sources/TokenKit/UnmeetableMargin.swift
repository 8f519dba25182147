#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A margin a caller asked for that the server's tokens can never give: they live no
/// longer than the margin, so no token is ever valid for that long, and every call for one
/// refreshes. The refresher hands out the new token all the same (a shorter-lived token
/// beats none), so without this the cost is paid silently on every call.
///
/// The one rule for every path that hands out a token for an asked margin (the command
/// line and the agent); the front end words it.
public struct UnmeetableMargin: Sendable, Hashable {
  /// The margin asked for, in whole seconds.
  public var asked: Int
  /// How long the server's tokens live, in whole seconds.
  public var lifetime: Int
  /// The largest margin worth asking for: a token then serves calls for a while before
  /// the next refresh (``headroom(forLifetime:)``).
  public var largestUseful: Int

  /// The shortfall of `tokens`, just handed out at `now` to a caller that asked for
  /// `asked` seconds of validity; nil when they give that much.
  ///
  /// Only a token that lives no longer than the margin counts: one that lives longer but
  /// came up short was refreshed by another process a while ago, and the next one will do.
  /// A token without an expiry never falls short.
  public init?(asked: Double, handedOut tokens: TokenSet, now: Date) {
    guard let expiresAt = tokens.expiresAt, expiresAt.timeIntervalSince(now) < asked else { return nil }
    // Without the time of issue (a token stored before it was recorded), what is left of
    // it stands in: it was just refreshed.
    let lifetime = tokens.lifetime ?? expiresAt.timeIntervalSince(now)
    guard lifetime > 0, lifetime <= asked else { return nil }
    self.asked = Int(asked.rounded(.up))
    self.lifetime = Int(lifetime.rounded())
    self.largestUseful = max(0, Int((lifetime - Self.headroom(forLifetime: lifetime)).rounded(.down)))
  }

  /// How much shorter than the lifetime a useful margin is: ten seconds, so that each token
  /// serves the calls of ten seconds before the next refresh; half the lifetime for tokens
  /// that live less than twenty.
  public static func headroom(forLifetime lifetime: Double) -> Double { min(10, lifetime / 2) }
}
