/// How many terminal columns text takes, as `wcwidth(3)` counts them: East Asian Wide and
/// Fullwidth characters (CJK ideographs, kana, Hangul syllables, fullwidth forms) and
/// emoji shown as emoji take two, combining marks and invisible format characters none,
/// everything else one. Tables align their columns by it, so that a name in Chinese,
/// Japanese or Korean does not push the columns after it out of line.
enum DisplayWidth {
  /// Columns of `text` in a terminal.
  static func of(_ text: String) -> Int {
    text.unicodeScalars.reduce(0) { $0 + of($1) }
  }

  /// Columns of one scalar: the first rule that applies decides.
  static func of(_ scalar: Unicode.Scalar) -> Int {
    let properties = scalar.properties
    switch properties.generalCategory {
    // Drawn on the character before them: an accent, a vowel sign.
    case .nonspacingMark, .enclosingMark: return 0
    // Controls are not drawn; format characters (zero width space, joiners, direction
    // marks) are not either, except the soft hyphen, which terminals show as a hyphen.
    case .control: return 0
    case .format: return scalar == "\u{00AD}" ? 1 : 0
    default: break
    }
    // Hangul vowels and final consonants that join the syllable before them.
    if zeroWidthJamo.contains(scalar.value) { return 0 }
    if wide.contains(where: { $0.contains(scalar.value) }) { return 2 }
    // Emoji drawn as pictures by default (East Asian Width W since Unicode 9).
    if properties.isEmojiPresentation { return 2 }
    return 1
  }

  /// Medial vowels and final consonants of the Hangul Jamo block.
  private static let zeroWidthJamo: ClosedRange<UInt32> = 0x1160...0x11FF

  /// The blocks whose characters Unicode's East Asian Width property (UAX #11) calls
  /// Wide or Fullwidth.
  private static let wide: [ClosedRange<UInt32>] = [
    0x1100...0x115F,  // Hangul Jamo initial consonants
    0x2329...0x232A,  // angle brackets
    0x2E80...0x303E,  // CJK radicals, Kangxi radicals, ideographic description, CJK symbols and punctuation
    0x3041...0x33FF,  // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun, CJK strokes, enclosed
    0x3400...0x4DBF,  // CJK Unified Ideographs Extension A
    0x4E00...0x9FFF,  // CJK Unified Ideographs
    0xA000...0xA4CF,  // Yi syllables and radicals
    0xA960...0xA97F,  // Hangul Jamo Extended-A
    0xAC00...0xD7A3,  // Hangul syllables
    0xF900...0xFAFF,  // CJK Compatibility Ideographs
    0xFE10...0xFE19,  // vertical forms
    0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
    0xFF00...0xFF60,  // fullwidth ASCII and punctuation
    0xFFE0...0xFFE6,  // fullwidth signs
    0x1B000...0x1B2FF,  // kana supplement and extensions
    0x1F200...0x1F2FF,  // enclosed ideographic supplement
    0x20000...0x2FFFD,  // CJK extensions B to F, compatibility supplement
    0x30000...0x3FFFD,  // CJK extensions G and after
  ]
}
