import AccountTypeFiles
import ArgumentParser
import Foundation
import TOMLReader
import Testing

@testable import TokenCtlCLI

/// Every example in README.md as a user would paste it: each `tokenctl` command line of
/// its shell blocks parsed by tokenctl's own parser, each config.toml block loaded as
/// config.toml and applied to the built-in types, and its table of exit statuses held
/// against `ExitStatus`, which the program, `--help` and tokenctl(1) read. An example
/// that does not run as printed is a trap the README sets.
///
/// What counts as a command: in a `console` block, a line that starts with `$ `; in an
/// `sh` block, every line; in both, with the lines a trailing `\` joins to it. A line is
/// cut into commands at `|`, `&&`, `||` and `;`, and what `$( … )` holds is a command too.
/// Only commands whose first word (after `NAME=value` assignments) is `tokenctl` are
/// tokenctl's: git, pip, curl, ssh, make and the rest are other programs', skipped by
/// rule. Output lines, and comments after `#`, are not commands.
@Suite struct ReadmeExampleTests {
  static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../README.md").standardizedFileURL

  /// A fenced block: its language (the word after the opening fence) and its lines, each
  /// with its line number in the README.
  struct Block {
    let language: String
    let lines: [(number: Int, text: String)]
  }

  static func blocks() throws -> [Block] {
    let text = try String(contentsOf: readme, encoding: .utf8)
    var blocks: [Block] = []
    var open: (language: String, lines: [(number: Int, text: String)])?
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      if line.hasPrefix("```") {
        if let block = open {
          blocks.append(Block(language: block.language, lines: block.lines))
          open = nil
        } else {
          open = (String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces), [])
        }
      } else if open != nil {
        open!.lines.append((index + 1, String(line)))
      }
    }
    return blocks
  }

  /// The command lines of the shell blocks, continuation lines joined, with the number of
  /// the line each starts on.
  static func commandLines() throws -> [(number: Int, text: String)] {
    var commands: [(number: Int, text: String)] = []
    for block in try blocks() where ["console", "sh", "shell", "bash"].contains(block.language) {
      var current: (number: Int, text: String)?
      for (number, line) in block.lines {
        if var command = current {
          command.text += " " + line.trimmingCharacters(in: .whitespaces)
          current = command
        } else if block.language == "console" {
          guard line.hasPrefix("$ ") else { continue }
          current = (number, String(line.dropFirst(2)))
        } else {
          guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
          current = (number, line)
        }
        if let command = current {
          if command.text.hasSuffix("\\") {
            current = (command.number, String(command.text.dropLast()))
          } else {
            commands.append(command)
            current = nil
          }
        }
      }
    }
    return commands
  }

  /// The simple commands of a shell command line, as words: cut at `|`, `&&`, `||` and `;`,
  /// quotes and backslashes undone, a comment dropped, and each `$( … )` a command of its
  /// own (standing in its word as `$(…)`). Enough shell for examples, not a shell.
  static func commands(in line: String) -> [[String]] {
    var commands: [[String]] = []
    var words: [String] = []
    var word: String?
    var quote: Character?
    var characters = Array(line)[...]
    func endWord() {
      if let finished = word { words.append(finished) }
      word = nil
    }
    func endCommand() {
      endWord()
      if !words.isEmpty { commands.append(words) }
      words = []
    }
    while let character = characters.popFirst() {
      if character == "$", characters.first == "(", quote != "'" {
        characters.removeFirst()
        var depth = 1
        var inner = ""
        while let next = characters.popFirst() {
          if next == "(" { depth += 1 }
          if next == ")" { depth -= 1 }
          if depth == 0 { break }
          inner.append(next)
        }
        commands += Self.commands(in: inner)
        word = (word ?? "") + "$(…)"
      } else if let open = quote {
        if character == open {
          quote = nil
        } else if character == "\\", open == "\"", let next = characters.popFirst() {
          word!.append(next)
        } else {
          word!.append(character)
        }
      } else if character == "'" || character == "\"" {
        quote = character
        word = word ?? ""
      } else if character == "\\", let next = characters.popFirst() {
        word = (word ?? "") + String(next)
      } else if character == "#", word == nil {
        break
      } else if character == "|" || character == "&" || character == ";" {
        if characters.first == character { characters.removeFirst() }
        endCommand()
      } else if character == " " || character == "\t" {
        endWord()
      } else {
        word = (word ?? "") + String(character)
      }
    }
    endCommand()
    return commands
  }

  /// tokenctl's arguments in `words`, or nil when the command is another program's.
  static func tokenctlArguments(_ words: [String]) -> [String]? {
    let command = words.drop { $0.firstMatch(of: /^[A-Za-z_][A-Za-z0-9_]*=/) != nil }
    guard command.first == "tokenctl" else { return nil }
    // `--verbose` and `--quiet` are taken out before the parser sees the line
    // (`TokenCtl.main`), anywhere before a `--`.
    let arguments = Array(command.dropFirst())
    let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
    return arguments.enumerated().filter { $0.offset >= end || !["--verbose", "--quiet", "-q"].contains($0.element) }
      .map(\.element)
  }

  @Test func theShellSplitterFindsTokenctlWhereAUserWouldRunIt() {
    #expect(
      Self.commands(in: #"curl -H "Authorization: Bearer $(tokenctl token graph:ada)" https://x/me"#).compactMap(
        Self.tokenctlArguments) == [["token", "graph:ada"]])
    #expect(
      Self.commands(in: "tokenctl request github:ada /user --json | jq '.body[].name'   # names").compactMap(
        Self.tokenctlArguments) == [["request", "github:ada", "/user", "--json"]])
    #expect(Self.commands(in: "git clone https://github.com/acme/app.git").compactMap(Self.tokenctlArguments) == [])
    #expect(
      Self.commands(in: "TOKENCTL_LOG=debug tokenctl --verbose list && tokenctl status").compactMap(
        Self.tokenctlArguments) == [["list"], ["status"]])
  }

  /// What the check below rests on: the parser refuses an option a command does not have,
  /// so an example with a mistyped or removed option fails it.
  @Test func aCommandLineWithAnOptionNoCommandHasDoesNotParse() {
    let arguments = Self.commands(in: "tokenctl refresh --every").compactMap(Self.tokenctlArguments)
    #expect(arguments == [["refresh", "--every"]])
    #expect(throws: (any Error).self) { try TokenCtl.parseAsRoot(arguments[0]) }
  }

  @Test func everyTokenctlCommandLineParses() throws {
    var found = 0
    var failures: [String] = []
    for (number, line) in try Self.commandLines() {
      for arguments in Self.commands(in: line).compactMap(Self.tokenctlArguments) {
        found += 1
        do {
          _ = try TokenCtl.parseAsRoot(arguments)
        } catch {
          failures.append("README.md:\(number): \(line)\n  \(TokenCtl.message(for: error))")
        }
      }
    }
    #expect(found >= 10, "the README's tokenctl command lines were not found")
    #expect(failures.isEmpty, "README examples tokenctl does not take:\n\(failures.joined(separator: "\n"))")
  }

  /// A TOML block is config.toml unless its first line is a comment naming another
  /// program's file (`# ~/.cargo/config.toml`): that one is checked as TOML only.
  @Test func everyTOMLBlockLoads() throws {
    let blocks = try Self.blocks().filter { $0.language == "toml" }
    #expect(!blocks.isEmpty, "the README's TOML blocks were not found")
    for block in blocks {
      let text = block.lines.map(\.text).joined(separator: "\n") + "\n"
      let place = "README.md:\(block.lines.first?.number ?? 0)"
      if let first = block.lines.first?.text, first.hasPrefix("#"), first.contains("/"),
        !first.contains("tokenctl/config.toml")
      {
        #expect(throws: Never.self, "\(place)") { try TOMLParser.parse(text, source: place) }
        continue
      }
      #expect(throws: Never.self, "\(place)") {
        let configuration = try Configuration(parsing: Array(text.utf8), path: place)
        _ = try BuiltinPlugins.registry().applying(configuration.types)
      }
    }
  }

  /// The README's table of exit statuses (`| Status | Meaning |`) lists the codes of
  /// `ExitStatus`, in its order, and no other.
  @Test func theExitStatusTableListsEveryStatus() throws {
    let text = try String(contentsOf: Self.readme, encoding: .utf8)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let header = try #require(
      lines.firstIndex { $0.replacing(" ", with: "").hasPrefix("|Status|Meaning|") },
      "README.md has no `| Status | Meaning |` table")
    let rows = lines[(header + 2)...].prefix { $0.hasPrefix("|") }
    let codes = rows.map { row in
      Int32(row.split(separator: "|").first?.trimmingCharacters(in: .whitespaces) ?? "")
    }
    #expect(codes == ExitStatus.allCases.map { Optional($0.rawValue) })
  }
}
