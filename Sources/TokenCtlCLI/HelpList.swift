/// A titled list of terms and their descriptions in a command's discussion (tokenctl's
/// Environment and Exit status), laid out with hanging indents that survive rewrapping.
///
/// swift-argument-parser rewraps discussion text to the terminal, but keeps every line
/// shorter than the terminal as it is; a longer line is broken, and its rest starts at
/// column 0, under the terms. So each description is wrapped here, its continuation
/// lines indented under its start, and no line is wider than ``width``: it reads the same
/// in `--help` on an 80-column terminal and in the man page, where man(1) sets the text
/// five columns in from a 78-column line.
enum HelpList {
  /// The widest line: 78 columns less man(1)'s indent.
  static let width = 73

  /// `title:`, then one entry per term: `term` in a column `termWidth` wide, its text
  /// beside it (below it, when the term is wider than the column).
  static func render(_ title: String, _ entries: [(term: String, text: String)], termWidth: Int) -> String {
    let indent = String(repeating: " ", count: 2 + termWidth + 2)
    var lines = [title + ":"]
    for (term, text) in entries {
      var text = wrapped(text, to: width - indent.count).map { indent + $0 }
      let label = "  " + term
      if term.count <= termWidth {
        text[0] = label + String(repeating: " ", count: indent.count - label.count) + text[0].dropFirst(indent.count)
      } else {
        lines.append(label)
      }
      lines += text
    }
    return lines.joined(separator: "\n")
  }

  /// `text` in lines of at most `width` characters, broken at spaces (a longer word
  /// gets a line of its own).
  static func wrapped(_ text: String, to width: Int) -> [String] {
    // The line's length is counted as it grows: `String.count` walks the whole line, and
    // the root command's help (Environment, Exit status) is built on every parse.
    var lines: [String] = []
    var line = ""
    var length = 0
    for word in text.split(separator: " ") {
      let wordLength = word.count
      if length > 0, length + 1 + wordLength > width {
        lines.append(line)
        line = ""
        length = 0
      }
      if length > 0 {
        line += " "
        length += 1
      }
      line += word
      length += wordLength
    }
    return lines + [line]
  }
}
