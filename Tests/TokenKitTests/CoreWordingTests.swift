import Foundation
import Testing
import TokenKit

/// The core returns facts; front ends word them (issue 12, item 2). An app embedding
/// TokenKit must not tell its users to run a command of ours.
@Suite struct CoreWordingTests {
  static let core = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../Sources/TokenKit").standardizedFileURL

  /// tokenctl's subcommands, the flags of the command line, and its configuration file.
  static func namesTheCommandLine(_ text: String) -> Bool {
    let words = try! Regex(
      #"tokenctl[ -](login|list|refresh|revoke|token|request|types|setup-git|graph|credential)\b|(^|[\s(`'])--[a-z]|config\.toml"#
    )
    return text.contains(words)
  }

  @Test func noStringLiteralInTheCoreNamesACommandFlagOrConfigFile() throws {
    var files: [URL] = []
    let walker = FileManager.default.enumerator(at: Self.core, includingPropertiesForKeys: nil)
    while let file = walker?.nextObject() as? URL {
      if file.pathExtension == "swift" { files.append(file) }
    }
    #expect(files.count > 40, "\(Self.core.path) holds only \(files.count) Swift files")
    var found: [String] = []
    for file in files {
      for literal in Self.stringLiterals(in: try String(contentsOf: file, encoding: .utf8))
      where Self.namesTheCommandLine(literal) {
        found.append("\(file.lastPathComponent): \(literal)")
      }
    }
    #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
  }

  /// The scanner finds what a hint of the old kind looked like, so the test can fail.
  @Test func theScannerFindsCommandsInLiteralsButNotInComments() {
    let source = #"""
      // Run `tokenctl login x`: a comment, not a message.
      /// Pass --issuer: documentation.
      let a = "Run `tokenctl login \(type)` again."
      let b = #"pass --allow-host "\(host)""#
      let c = """
        set client_id in config.toml
        """
      let d = "tokenctl does not support this" // product name only
      """#
    let literals = Self.stringLiterals(in: source)
    #expect(literals.count == 4, "\(literals)")
    #expect(literals.filter(Self.namesTheCommandLine).count == 3)
  }

  /// The text of every string literal in `source`, comments skipped. Interpolations stay
  /// in the text; escapes are not decoded (a hint is plain words).
  static func stringLiterals(in source: String) -> [String] {
    var literals: [String] = []
    var rest = Substring(source)
    while let index = rest.firstIndex(where: { $0 == "\"" || $0 == "/" || $0 == "#" }) {
      rest = rest[index...]
      if rest.hasPrefix("//") {
        rest = rest.drop { $0 != "\n" }
        continue
      }
      if rest.hasPrefix("/*") {
        rest = rest.range(of: "*/").map { rest[$0.upperBound...] } ?? ""
        continue
      }
      let hashes = rest.prefix { $0 == "#" }.count
      let afterHashes = rest.dropFirst(hashes)
      guard afterHashes.hasPrefix("\"") else {
        rest = rest.dropFirst(max(hashes, 1))
        continue
      }
      let delimiter = afterHashes.hasPrefix("\"\"\"") ? "\"\"\"" : "\""
      let closing = delimiter + String(repeating: "#", count: hashes)
      var body = afterHashes.dropFirst(delimiter.count)
      var text = ""
      while !body.isEmpty, !body.hasPrefix(closing) {
        // An escaped character (a quote included) is part of the literal.
        if hashes == 0, body.hasPrefix("\\") {
          text += body.prefix(2)
          body = body.dropFirst(2)
          continue
        }
        text.append(body.removeFirst())
      }
      literals.append(text)
      rest = body.dropFirst(closing.count)
    }
    return literals
  }
}
