#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// The `Date` header's time, in the one format servers must send (RFC 9110 §5.6.7,
/// IMF-fixdate): `Sun, 06 Nov 1994 08:49:37 GMT`. The two obsolete formats a recipient
/// may accept are left out: a server old enough to send them is not worth a clock check.
enum HTTPDate {
  private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

  static func parse(_ text: String) -> Date? {
    let words = text.split(separator: " ")
    guard words.count == 6, words[0].hasSuffix(","), words[5] == "GMT",
      let day = Int32(words[1]), (1...31).contains(day),
      let month = months.firstIndex(of: String(words[2])),
      let year = Int32(words[3]), year >= 1970
    else { return nil }
    let clock = words[4].split(separator: ":").compactMap { Int32($0) }
    guard clock.count == 3, (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
    else { return nil }
    var parts = tm()
    parts.tm_year = year - 1900
    parts.tm_mon = Int32(month)
    parts.tm_mday = day
    parts.tm_hour = clock[0]
    parts.tm_min = clock[1]
    parts.tm_sec = clock[2]
    let seconds = timegm(&parts)
    guard seconds >= 0 else { return nil }
    return Date(timeIntervalSince1970: Double(seconds))
  }
}
