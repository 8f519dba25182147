/// A titled list of terms and their descriptions in a command's discussion (tokenctl's
/// Environment and Exit status), laid out with hanging indents that survive rewrapping.
///
/// swift-argument-parser rewraps discussion text to the terminal, but keeps every line
/// shorter than the terminal as it is; a longer line is broken, and its rest starts at
/// column 0, under the terms. So each description is wrapped here, its continuation
/// lines indented under its start, and no line is wider than ``width``: it reads the same
/// in `--help` on an 80-column terminal and in the man page, where man(1) sets the text
/// five columns in from a 78-column line.
///
/// The lists are laid out in UTF-8 bytes, a column being a Unicode scalar (the text has
/// no combining marks and no wide characters): the root command's discussion is built on
/// every start that shows help, and laid out with `String` and `Substring` (grapheme
/// breaking, generic appends) these two lists were a tenth of `tokenctl --help`'s CPU
/// time, and `--help` must be no slower than before the front end.
enum HelpList {
  /// The widest line: 78 columns less man(1)'s indent.
  static let width = 73

  /// `title:`, then one entry per term: `term` in a column `termWidth` wide, its text
  /// beside it (below it, when the term is wider than the column).
  static func render(_ title: String, _ entries: [(term: String, text: String)], termWidth: Int) -> String {
    let indent = 2 + termWidth + 2
    var out = Array(title.utf8)
    out.append(UInt8(ascii: ":"))
    for (term, text) in entries {
      let termBytes = Array(term.utf8)
      out.append(UInt8(ascii: "\n"))
      out += [UInt8(ascii: " "), UInt8(ascii: " ")]
      out += termBytes
      // The text starts beside the term when the term fits its column, else on a line
      // of its own below it.
      var column = 2 + columns(termBytes[...])
      var first = true
      for line in wrapped(Array(text.utf8), to: width - indent) {
        if !first || column > indent - 2 {
          out.append(UInt8(ascii: "\n"))
          column = 0
        }
        out += repeatElement(UInt8(ascii: " "), count: indent - column)
        out += line
        first = false
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// The lines of `text` in `width` columns or fewer, broken at spaces (a longer word
  /// gets a line of its own); one empty line for an empty text.
  static func wrapped(_ text: [UInt8], to width: Int) -> [ArraySlice<UInt8>] {
    var lines: [ArraySlice<UInt8>] = []
    var line: ArraySlice<UInt8> = []
    var length = 0
    for word in text.split(separator: UInt8(ascii: " ")) {
      let wordLength = columns(word)
      if length > 0, length + 1 + wordLength > width {
        lines.append(line)
        line = []
        length = 0
      }
      if length > 0 {
        line.append(UInt8(ascii: " "))
        length += 1
      }
      line += word
      length += wordLength
    }
    return lines + [line]
  }

  /// The columns UTF-8 `bytes` take: one per Unicode scalar (continuation bytes are not
  /// counted).
  static func columns(_ bytes: ArraySlice<UInt8>) -> Int {
    bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
  }
}
