import Synchronization
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The agent's pause before it asks a failing server again for an account's tokens,
/// shared by its refresh ahead and every client's request: while the server is down or
/// asks us to wait, a client whose token needs a refresh gets the last failure at once,
/// and the server gets one request at a time from this agent, however many clients ask.
///
/// The pause ends as soon as the server is back, not when a timer says: every few seconds
/// one request goes through as a probe (``admit(_:now:)``), and its success ends the pause
/// for everyone. A pause that only doubled made clients fail for as long again after an
/// outage ended, up to its longest, with nothing asking whether the server had recovered.
/// A probe never goes before the server's `Retry-After`.
///
/// Only failures of the server or the network pause: a refused grant ends the account's
/// refreshes by itself, and a locked keyring is not the server's fault. Requests of one
/// account run one at a time (the service's turnstile), so at most one probe is out.
final class ServerBackoff: Sendable {
  private struct Pause {
    var error: TokenKitError
    var failures: Int
    /// The earliest a request may go to the server again, as a probe.
    var nextProbe: Date
    /// When the probe now out went, if one is out.
    var probeSent: Date?
  }
  private let pauses = Mutex<[String: Pause]>([:])

  /// The wait before the first probe: a single failure of a busy server costs clients a
  /// second of errors, not seconds.
  static let firstProbe: Double = 1
  /// The longest wait between probes, the interval doubling from ``firstProbe``: a client
  /// gets its first success within this of the server's recovery, whatever the outage's
  /// length, and a server that stays down gets one request this often while clients ask.
  static let probeEvery: Double = 4
  /// A probe that has not come back in this long is taken as lost (its task ended without
  /// telling), so that one lost probe does not keep the pause for ever. Longer than any
  /// request the transport lets run.
  static let probeLost: Double = 180

  /// The longest refresh ahead waits between tries of a failing server when no client
  /// asks (``AgentService/backoff(_:error:)``): a server down for hours gets one request
  /// every five minutes per account from refreshes nobody is waiting for.
  static let longest: Double = 300

  /// Whether `error` is one that pauses.
  static func pauses(for error: any Error) -> Bool {
    guard let error = error as? TokenKitError else { return false }
    return error.code == .serverError || error.code == .networkFailure
  }

  /// The failure to answer with at once, without waiting for a turn: a pause lasts and no
  /// request may go now (a probe is out, or the next is not due). nil when the caller may
  /// try (``admit(_:now:)`` decides, in its turn).
  func current(_ account: String, now: Date) -> TokenKitError? {
    pauses.withLock { pauses in
      guard let pause = pauses[account], !Self.mayProbe(pause, now: now) else { return nil }
      return pause.error
    }
  }

  /// Whether a request for `account` may go to the server now: nil when there is no pause,
  /// or when this request is the probe (then it must end in ``succeeded(_:)``,
  /// ``failed(_:error:now:)`` or ``settled(_:now:)``); else the failure to answer with.
  func admit(_ account: String, now: Date) -> TokenKitError? {
    pauses.withLock { pauses in
      guard var pause = pauses[account] else { return nil }
      guard Self.mayProbe(pause, now: now) else { return pause.error }
      pause.probeSent = now
      pauses[account] = pause
      return nil
    }
  }

  private static func mayProbe(_ pause: Pause, now: Date) -> Bool {
    if let sent = pause.probeSent, now.timeIntervalSince(sent) < probeLost { return false }
    return now >= pause.nextProbe
  }

  /// Records a failure of the server or the network: the next probe is due after an
  /// interval doubling from ``firstProbe`` to ``probeEvery``, and not before the server's
  /// `Retry-After`. Returns when it is due.
  @discardableResult
  func failed(_ account: String, error: TokenKitError, now: Date) -> Date {
    pauses.withLock { pauses in
      let failures = (pauses[account]?.failures ?? 0) + 1
      let doubling = min(Self.firstProbe * Double(1 << min(failures - 1, 20)), Self.probeEvery)
      let next = now.addingTimeInterval(max(doubling, error.retryAfter ?? 0))
      pauses[account] = Pause(error: error, failures: failures, nextProbe: next, probeSent: nil)
      return next
    }
  }

  /// The server answered: no more pause.
  func succeeded(_ account: String) {
    _ = pauses.withLock { $0.removeValue(forKey: account) }
  }

  /// A request let through ended without telling whether the server is back (the keyring
  /// failed first, say): the pause stays as it was, and the next request may probe.
  func settled(_ account: String) {
    pauses.withLock { pauses in pauses[account]?.probeSent = nil }
  }
}
