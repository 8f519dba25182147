/// How far apart two keys are, for "did you mean" in configuration errors.
enum EditDistance {
  /// The Levenshtein distance; keys are short, so quadratic is fine, and long ones are cut
  /// off first so that a hostile file cannot make it slow.
  static func levenshtein(_ lhs: String, _ rhs: String) -> Int {
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
}
