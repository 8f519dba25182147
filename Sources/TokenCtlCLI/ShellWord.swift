/// A word of a command we print for the user to run, quoted for a POSIX shell only when it
/// needs it: every hint is a command that runs as printed, also when a name holds a space,
/// a `|` or a quote.
enum ShellWord {
  /// `word` as is when every character is one no shell treats specially, else in single
  /// quotes (a quote inside becomes `'\''`).
  static func quoted(_ word: String) -> String {
    if !word.isEmpty, word.unicodeScalars.allSatisfy(isPlain) { return word }
    return "'" + word.map { $0 == "'" ? #"'\''"# : String($0) }.joined() + "'"
  }

  /// Letters, digits and `@%+=:,./-_`: what POSIX shells leave alone in every position
  /// but the first of a word for `=` and `~`, which never start a name we print.
  private static func isPlain(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar {
    case "a"..."z", "A"..."Z", "0"..."9": return true
    case "@", "%", "+", "=", ":", ",", ".", "/", "-", "_": return true
    default: return false
    }
  }
}
