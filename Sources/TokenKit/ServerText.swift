/// Text another party chose (a server's error, a header, a claim, a keyring item's name)
/// made safe to show inside one of our messages.
///
/// Every control character (C0 with line feed and carriage return, DEL, C1), the Unicode
/// line and paragraph separators, and the bidirectional overrides are shown as `\u{…}`:
/// a server must not be able to end our line and print one that looks like our own
/// `hint:`, rewrite the terminal with escape sequences, or reorder what the user reads.
/// This is the one rule; the command line's terminal guard uses it too.
public enum ServerText {
  /// The longest server text kept in a message: enough for any honest error description,
  /// short enough that a hostile one cannot flood the terminal.
  public static let maximumLength = 300

  /// `text` with every character that could break or disguise a line escaped, cut to
  /// `limit` characters (with an ellipsis) when one is given.
  public static func escaped(_ text: some StringProtocol, limit: Int? = maximumLength) -> String {
    var result = ""
    var count = 0
    for scalar in text.unicodeScalars {
      if let limit, count >= limit { return result + "…" }
      count += 1
      if isUnsafe(scalar) {
        result += "\\u{\(String(scalar.value, radix: 16))}"
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0..<0x20, 0x7F...0x9F: return true  // C0 (with LF, CR, ESC), DEL, C1 (with CSI).
    case 0x2028, 0x2029: return true  // Line and paragraph separators.
    case 0x202A...0x202E, 0x2066...0x2069: return true  // Bidirectional embeddings and isolates.
    default: return false
    }
  }
}
