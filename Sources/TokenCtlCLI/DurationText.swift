/// Short human durations: `40 s`, `42 min`, `3 h 5 min`, `2 d 4 h`.
enum DurationText {
  static func format(seconds: Int) -> String {
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
}
