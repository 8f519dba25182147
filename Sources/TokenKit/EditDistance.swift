/// How far apart two words are, for "did you mean": a key in a configuration file, a
/// command, an account type or an account name typed by hand.
public enum EditDistance {
  /// The Levenshtein distance; words are short, so quadratic is fine, and long ones are cut
  /// off first so that a hostile file cannot make it slow.
  public static func levenshtein(_ lhs: String, _ rhs: String) -> Int {
    let a = Array(lhs.unicodeScalars.prefix(64))
    let b = Array(rhs.unicodeScalars.prefix(64))
    guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
    var previous = Array(0...b.count)
    for i in 1...a.count {
      var current = [i] + Array(repeating: 0, count: b.count)
      for j in 1...b.count {
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
      }
      previous = current
    }
    return previous[b.count]
  }

  /// A slip of one or two keys; further than that, a guess misleads more than it helps.
  public static let nearEnough = 2

  /// The one of `candidates` that `word` was most likely meant as: at most ``nearEnough``
  /// edits away, and nearer than any other. Nil when none is near or two are equally near.
  public static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
    closest(to: word, among: candidates) { [$0] }
  }

  /// The one of `candidates` whose `forms` (a name and its part before the `@`, say) come
  /// nearest `word`, as ``closest(to:among:)`` chooses.
  public static func closest<Candidate>(
    to word: String, among candidates: some Sequence<Candidate>, forms: (Candidate) -> [String]
  ) -> Candidate? {
    let near = candidates.compactMap { candidate in
      forms(candidate).map { levenshtein(word, $0) }.min().map { (candidate, $0) }
    }
    .filter { $0.1 <= nearEnough }
    guard let best = near.min(by: { $0.1 < $1.1 }) else { return nil }
    return near.count(where: { $0.1 == best.1 }) == 1 ? best.0 : nil
  }
}
