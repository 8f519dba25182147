import ArgumentParser
import Foundation
import TestSupport
import Testing
import TokenCtlCLI

/// The libraries return facts; front ends word them. An app
/// embedding any library product of the package (TokenKit, NativeAppSupport, the keyring
/// store, the account plugins) must not tell its users to run a command of ours: no
/// string literal in them names a tokenctl command, a flag or config.toml. The products
/// are read from Package.swift and the commands from the parser's own configuration, so a
/// new product or command is covered without anyone listing it here.
@Suite struct LibraryWordingTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../..").standardizedFileURL

  /// Every command and alias of the command line, subcommands included.
  static let commands: [String] = {
    var names: [String] = []
    var pending: [any ParsableCommand.Type] = [TokenCtl.self]
    while let command = pending.popLast() {
      let configuration = command.configuration
      if command != TokenCtl.self, let name = configuration.commandName { names.append(name) }
      names += configuration.aliases
      pending += configuration.subcommands
    }
    return Array(Set(names)).sorted()
  }()

  /// The long options of every command, from the parser's own description of the command
  /// line (`--experimental-dump-help`): options of other programs, such as
  /// gnome-keyring-daemon's, are a library's to name.
  static func flags() async throws -> [String] {
    let dump = try await TestProcess.run(TestProcess.tokenctl, ["--experimental-dump-help"])
    let root =
      try #require(
        try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])["command"] as? [String: Any]
    var names: Set<String> = []
    var pending = [try #require(root)]
    while let command = pending.popLast() {
      for argument in command["arguments"] as? [[String: Any]] ?? [] {
        for name in argument["names"] as? [[String: String]] ?? [] where name["kind"] == "long" {
          names.insert(name["name"] ?? "")
        }
      }
      pending += command["subcommands"] as? [[String: Any]] ?? []
    }
    return names.filter { !$0.isEmpty }.sorted()
  }

  /// Whether `text` names one of tokenctl's `commands`, one of its `flags`, or config.toml.
  static func namesTheCommandLine(_ text: String, flags: [String]) -> Bool {
    let escape = { (words: [String]) in words.map { NSRegularExpression.escapedPattern(for: $0) }.joined(separator: "|")
    }
    let words = try! Regex(
      #"tokenctl[ -]("# + escape(commands) + #")\b|(^|[\s(`'])--("# + escape(flags) + #")\b|config\.toml"#)
    return text.contains(words)
  }

  /// The source folders of the package's library products, from Package.swift: a
  /// target's `path:` where it has one, else Sources/NAME. The fuzzing product is for
  /// Tests/Fuzz only.
  static func libraryFolders() throws -> [String: URL] {
    let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
    var targets: [String] = []
    for match in manifest.matches(of: #/\.library\(name: "([A-Za-z]+)", targets: \[([^\]]*)\]\)/#) {
      guard match.1 != "TokenCtlFuzzing" else { continue }
      targets += match.2.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \"")) }
    }
    var folders: [String: URL] = [:]
    for target in targets {
      let declared = manifest.firstMatch(
        of: try Regex(#"\.target\(\s*name: ""# + target + #"",[^)]*?path: "([^"]+)""#))
      let path = (declared?.output[1].substring).map(String.init) ?? "Sources/\(target)"
      folders[target] = root.appendingPathComponent(path)
    }
    return folders
  }

  @Test func noStringLiteralInALibraryNamesACommandFlagOrConfigFile() async throws {
    #expect(Self.commands.contains("login") && Self.commands.contains("setup-git") && Self.commands.count > 20)
    let flags = try await Self.flags()
    #expect(flags.contains("paste") && flags.contains("group") && flags.contains("min-valid"), "\(flags)")
    let folders = try Self.libraryFolders()
    #expect(
      Set(["TokenKit", "NativeAppSupport", "SecretServiceStore", "OpenIDConnectAccount"]).isSubset(of: folders.keys))
    var found: [String] = []
    for (target, folder) in folders.sorted(by: { $0.key < $1.key }) {
      var files: [URL] = []
      let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
      while let file = walker?.nextObject() as? URL {
        if file.pathExtension == "swift" { files.append(file) }
      }
      #expect(!files.isEmpty, "\(target): no Swift files in \(folder.path)")
      for file in files {
        for literal in Self.stringLiterals(in: try String(contentsOf: file, encoding: .utf8))
        where Self.namesTheCommandLine(literal, flags: flags) {
          found.append("\(target)/\(file.lastPathComponent): \(literal)")
        }
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
    #expect(literals.filter { Self.namesTheCommandLine($0, flags: ["allow-host"]) }.count == 3)
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
