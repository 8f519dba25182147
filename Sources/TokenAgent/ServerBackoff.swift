import Synchronization
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The agent's pause before it asks a failing server again for an account's tokens,
/// shared by its refresh ahead and every client's request (issue 28, item 7): while the
/// server is down or asks us to wait, a client whose token needs a refresh gets the last
/// failure at once, and the server gets one request per pause from this agent, however
/// many clients ask.
///
/// Only failures of the server or the network pause: a refused grant ends the account's
/// refreshes by itself, and a locked keyring is not the server's fault.
final class ServerBackoff: Sendable {
  private struct Pause {
    var until: Date
    var error: TokenKitError
    var failures: Int
  }
  private let pauses = Mutex<[String: Pause]>([:])

  /// The first pause: a blip costs clients a few seconds of errors at most.
  static let first: Double = 5
  /// The longest: a server down for hours gets one request every five minutes per
  /// account, and a client waits no longer than that for the server to be asked again.
  static let longest: Double = 300

  /// Whether `error` is one that pauses.
  static func pauses(for error: any Error) -> Bool {
    guard let error = error as? TokenKitError else { return false }
    return error.code == .serverError || error.code == .networkFailure
  }

  /// The failure to answer with instead of asking the server, while a pause lasts.
  func current(_ account: String, now: Date) -> TokenKitError? {
    pauses.withLock { pauses in
      guard let pause = pauses[account], pause.until > now else { return nil }
      return pause.error
    }
  }

  /// Records a failure: the pause doubles from ``first`` to ``longest``, and lasts at
  /// least as long as the server's `Retry-After`. Returns when it ends.
  @discardableResult
  func failed(_ account: String, error: TokenKitError, now: Date) -> Date {
    pauses.withLock { pauses in
      let failures = (pauses[account]?.failures ?? 0) + 1
      let doubling = min(Self.first * Double(1 << min(failures - 1, 20)), Self.longest)
      let until = now.addingTimeInterval(max(doubling, error.retryAfter ?? 0))
      pauses[account] = Pause(until: until, error: error, failures: failures)
      return until
    }
  }

  /// The server answered: no more pause.
  func succeeded(_ account: String) {
    _ = pauses.withLock { $0.removeValue(forKey: account) }
  }
}
