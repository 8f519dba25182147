import Foundation
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenCtlCLI

/// Tables line their columns up in terminal columns, whatever script the cells are in.
@Suite struct TableTests {
  static func plain() throws -> Style {
    Style(
      context: CLIContext(
        registry: try BuiltinPlugins.registry(), makeStore: { InMemoryTokenStore(group: $0) },
        clock: FixedClock(Date(timeIntervalSince1970: 1_800_000_000)), environment: [:], output: CapturedOutput()))
  }

  /// The column where `marker` starts on each line, counted as a terminal draws it (CJK
  /// characters two columns wide).
  static func columns(of marker: String, in text: String, width: (Character) -> Int) -> [Int] {
    text.split(separator: "\n").map { line in
      let before = line.components(separatedBy: marker).first ?? ""
      return before.reduce(0) { $0 + width($1) }
    }
  }

  @Test func cjkNamesKeepTheNextColumnInLine() throws {
    var table = Table(header: ["NAME", "UPN", "MAIL"])
    table.rows = [
      ["Ada Lovelace", "ada@contoso.test", "ada@contoso.test"],
      ["山田 太郎", "taro@contoso.test", "taro@contoso.test"],
      ["김민준", "minjun@contoso.test", "-"],
      ["José\u{301}", "jose@contoso.test", "-"],
    ]
    let text = table.render(style: try Self.plain())
    // Counted by hand: ideographs, kana and Hangul are two columns, a combining accent none.
    func width(_ character: Character) -> Int {
      character.unicodeScalars.contains { (0x3000...0x9FFF).contains($0.value) || (0xAC00...0xD7A3).contains($0.value) }
        ? 2 : 1
    }
    let upn = text.split(separator: "\n").enumerated().map { index, line in
      let cells = line.split(separator: " ", omittingEmptySubsequences: true)
      let marker = index == 0 ? "UPN" : String(cells.first { $0.contains("@") } ?? "")
      return Self.columns(of: marker, in: String(line), width: width).first ?? -1
    }
    #expect(Set(upn).count == 1, "the UPN column starts at one column on every line: \(upn)\n\(text)")
    #expect(upn.first == 14, "the widest name (12 columns) and two spaces: \(upn)")
  }

  /// Columns as `wcwidth(3)` counts them, one row per rule of ``DisplayWidth``.
  @Test(
    arguments: [
      ("", 0), ("ada@contoso.test", 16),
      ("山田太郎", 8),  // CJK ideographs
      ("やまだ", 6), ("ヤマダ", 6),  // kana
      ("ｱｲｳ", 3),  // halfwidth katakana stays narrow
      ("김민준", 6),  // Hangul syllables
      ("\u{1100}\u{1161}", 2),  // a leading consonant and a joining vowel
      ("ＡＢ", 4), ("\u{3000}", 2),  // fullwidth forms, the ideographic space
      ("e\u{301}", 1), ("\u{20DD}", 0),  // a combining and an enclosing mark
      ("a\u{200B}b", 2), ("\u{00AD}", 1),  // zero width space; the soft hyphen is shown
      ("😀", 2), ("Ωμέγα", 5), ("中文 name", 9), ("𠀀", 2),  // emoji, Greek, mixed, CJK Extension B
    ] as [(String, Int)])
  func displayWidth(text: String, columns: Int) {
    #expect(DisplayWidth.of(text) == columns, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
  }
}
