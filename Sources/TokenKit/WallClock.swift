#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The source of the current wall-clock time.
///
/// Token expiry is wall-clock time (`expires_in` is counted from the token response), so
/// this is a `Date` and not a monotonic instant. Injecting it lets tests say "expires in
/// 30 s" without waiting 30 s.
public protocol WallClock: Sendable {
  var now: Date { get }
}

/// The system's real-time clock.
public struct SystemClock: WallClock {
  public init() {}
  public var now: Date { Date() }
}

/// A clock that reads a fixed instant; for tests and for evaluating many tokens against
/// one "now".
public struct FixedClock: WallClock {
  public var now: Date
  public init(_ now: Date) { self.now = now }
}
