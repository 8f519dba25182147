import AccountTypeFiles
import Foundation
import Testing
import TokenKit

/// Every config.toml example in tokenctl-config(5), as a user would paste it: taken out of
/// the page's literal displays, its roff escapes undone, parsed as config.toml and applied
/// to the built-in types. An example that does not load as printed is a trap the page sets.
@Suite struct ManPageExampleTests {
  /// The literal displays (`.Bd -literal` … `.Ed`) of the page at `path`, as text.
  static func examples(_ path: String) throws -> [String] {
    let page = try String(contentsOfFile: path, encoding: .utf8)
    var examples: [String] = []
    var current: [String]?
    for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix(".Bd -literal") {
        current = []
      } else if line.hasPrefix(".Ed"), let lines = current {
        examples.append(lines.joined(separator: "\n") + "\n")
        current = nil
      } else if current != nil {
        current!.append(unescaped(String(line)))
      }
    }
    return examples
  }

  /// Roff's escapes as a reader sees them printed: `\e` is a backslash, `\-` a minus, `\&`
  /// nothing.
  static func unescaped(_ line: String) -> String {
    line.replacing("\\e", with: "\\").replacing("\\-", with: "-").replacing("\\&", with: "")
  }

  @Test func everyConfigExampleLoadsAsPrinted() throws {
    let examples = try Self.examples("man/tokenctl-config.5")
    #expect(examples.count >= 2, "the page's examples were not found")
    for example in examples {
      let configuration = try Configuration(parsing: Array(example.utf8), path: "config.toml")
      _ = try BuiltinTypes.registry().applying(configuration.types)
      if example.contains("hook =") {
        #expect(configuration.hook != nil, "the example's hook is not read as a hook:\n\(example)")
      }
    }
  }
}
