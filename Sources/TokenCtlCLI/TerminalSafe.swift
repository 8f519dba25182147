import TokenKit

/// Text from the keyring made safe to print: any program of the user's can write an item,
/// and a name holding escape sequences must not be able to rewrite the user's terminal.
enum TerminalSafe {
  /// `text` with every control character (C0, DEL, C1), line separator and bidirectional
  /// override shown as `\u{…}`: ``ServerText``'s rule, without its length limit.
  static func text(_ text: String) -> String { ServerText.escaped(text, limit: nil) }
}
