import Foundation
import Synchronization
import TokenKit

/// A wall clock that tests move by hand.
public final class TestClock: WallClock, Sendable {
  private let instant: Mutex<Date>

  public init(_ now: Date = OAuthFixtures.now) { instant = Mutex(now) }

  public var now: Date { instant.withLock { $0 } }

  public func advance(by seconds: Double) { instant.withLock { $0 = $0.addingTimeInterval(seconds) } }
}
