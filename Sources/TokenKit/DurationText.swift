/// Short human durations for messages, one formatter for every front end: `1.5 s`,
/// `40 s`, `42 min`, `3 h 5 min`, `2 d 4 h`. Below a minute tenths are kept (a timeout
/// of 1.5 s is not "1 s"); above, the two largest units, rounded down.
public enum DurationText {
  public static func format(seconds: Int) -> String {
    let seconds = max(0, seconds)
    switch seconds {
    case ..<60: return "\(seconds) s"
    case ..<3600: return "\(seconds / 60) min"
    case ..<86_400:
      let minutes = seconds % 3600 / 60
      return minutes == 0 ? "\(seconds / 3600) h" : "\(seconds / 3600) h \(minutes) min"
    default:
      let hours = seconds % 86_400 / 3600
      return hours == 0 ? "\(seconds / 86_400) d" : "\(seconds / 86_400) d \(hours) h"
    }
  }

  public static func format(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0, attoseconds >= 0 else { return "0 s" }
    let tenths = attoseconds / 100_000_000_000_000_000
    if seconds < 60, tenths > 0 { return "\(seconds).\(tenths) s" }
    return format(seconds: Int(clamping: seconds))
  }
}
