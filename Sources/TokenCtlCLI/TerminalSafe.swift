/// Text from the keyring made safe to print: any program of the user's can write an item,
/// and a name holding escape sequences must not be able to rewrite the user's terminal.
enum TerminalSafe {
  /// `text` with every control character (C0, DEL, C1) shown as `\u{…}`.
  static func text(_ text: String) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
      if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
        result += "\\u{\(String(scalar.value, radix: 16))}"
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }
}
