extension Duration {
  /// Whole milliseconds, rounded up so that a short positive wait never becomes zero
  /// (a `poll` timeout of 0 would spin).
  var millisecondsRoundedUp: Int64 {
    let (seconds, attoseconds) = components
    guard seconds >= 0, attoseconds >= 0 else { return 0 }
    let (milliseconds, rest) = attoseconds.quotientAndRemainder(dividingBy: 1_000_000_000_000_000)
    let (total, overflow) = seconds.multipliedReportingOverflow(by: 1000)
    if overflow { return Int64.max }
    return total + milliseconds + (rest > 0 ? 1 : 0)
  }
}
