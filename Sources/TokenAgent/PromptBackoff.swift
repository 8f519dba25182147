#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// When the agent may ask the user the same consent question again after nobody
/// answered: a program that keeps calling must not raise a notification per call. The
/// first question is asked at once; after each one left unanswered, the next waits
/// `first`, then twice that, up to `longest`. An answer (allow or deny) ends the backoff:
/// the grants file holds it from then on.
struct PromptBackoff: Sendable {
  /// Two minutes: long enough that a program retrying in a loop raises one notification,
  /// short enough that a person who missed it sees the next soon.
  var first: TimeInterval = 120
  /// An hour: a person away all day finds one question an hour at most, per program,
  /// group and account.
  var longest: TimeInterval = 3600

  private var unanswered: [String: (count: Int, at: Date)] = [:]

  /// Whether the question `key` may be asked at `now`.
  func mayAsk(_ key: String, at now: Date) -> Bool {
    guard let last = unanswered[key] else { return true }
    return now >= last.at.addingTimeInterval(wait(after: last.count))
  }

  /// The wait after `count` questions in a row went unanswered.
  func wait(after count: Int) -> TimeInterval {
    min(first * Double(1 << min(max(count - 1, 0), 20)), longest)
  }

  /// The question `key` was asked at `now` and nobody answered.
  mutating func noteUnanswered(_ key: String, at now: Date) {
    let count = (unanswered[key]?.count ?? 0) + 1
    unanswered[key] = (count, now)
    // A bound: keys of programs long gone would otherwise pile up.
    if unanswered.count > 1024, let oldest = unanswered.min(by: { $0.value.at < $1.value.at })?.key {
      unanswered.removeValue(forKey: oldest)
    }
  }

  /// The question `key` was answered: ask again at once next time it comes up.
  mutating func noteAnswered(_ key: String) { unanswered.removeValue(forKey: key) }
}
