import ArgumentParser
import Testing

@testable import TokenCtlCLI

/// `tokenctl --help` on an 80-column terminal: swift-argument-parser rewraps the
/// discussion to the terminal, and a line it breaks goes on at column 0, under the
/// names of the Environment and Exit status lists.
@Suite struct HelpLayoutTests {
  /// The lines of `title`'s list in the help at `columns`, up to the blank line after it.
  static func section(_ title: String, columns: Int) throws -> [Substring] {
    let lines = TokenCtl.helpMessage(columns: columns).split(separator: "\n", omittingEmptySubsequences: false)
    let start = try #require(lines.firstIndex(of: Substring(title + ":")))
    let end = lines[start...].firstIndex(of: "") ?? lines.endIndex
    return Array(lines[(start + 1)..<end])
  }

  static let variables = [
    "TOKENCTL_GROUP", "TOKENCTL_CONFIG", "BROWSER", "DISPLAY, WAYLAND_DISPLAY", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR",
    "XDG_STATE_HOME", "NO_COLOR", "SSL_CERT_FILE", "TOKENCTL_LOG",
  ]

  @Test func theEnvironmentReadsWellAt80Columns() throws {
    let lines = try Self.section("Environment", columns: 80)
    #expect(lines.allSatisfy { $0.count < 80 }, "\(lines.filter { $0.count >= 80 })")
    // Every line is a variable's, or a description going on under its start.
    #expect(lines.allSatisfy { $0.hasPrefix("  ") }, "\(lines.filter { !$0.hasPrefix("  ") })")
    let starts = lines.filter { !$0.hasPrefix("   ") }.map { $0.dropFirst(2) }
    #expect(starts.count == Self.variables.count, "\(starts)")
    for variable in Self.variables {
      #expect(starts.contains { $0.hasPrefix(variable) }, "\(variable) does not start a line")
    }
    let descriptionColumn = 19
    for line in lines where line.hasPrefix("   ") {
      #expect(line.prefix { $0 == " " }.count == descriptionColumn, "not under its description: \(line)")
    }
  }

  @Test func theExitStatusesReadWellAt80Columns() throws {
    let lines = try Self.section("Exit status", columns: 80)
    #expect(lines.count >= ExitStatus.allCases.count)
    for line in lines {
      #expect(line.count < 80 && line.hasPrefix("  "), "\(line)")
      let code = line.dropFirst(2).prefix { $0.isNumber }
      #expect(code.isEmpty ? line.prefix { $0 == " " }.count == 6 : Int(code) != nil, "\(line)")
    }
  }

  /// man(1) sets the description five columns in from a 78-column line: the lists fit
  /// there too, so the generated man page shows them as they are.
  @Test func theListsFitTheManPage() throws {
    for title in ["Environment", "Exit status"] {
      for line in try Self.section(title, columns: 200) {
        #expect(line.count <= HelpList.width, "\(line)")
      }
    }
    #expect(HelpList.width <= 78 - 5)
  }

  /// `tokenctl --help` as a user meets it, through the parser or not: the commands come
  /// first, as git's and gh's help lists them, then the environment and exit statuses,
  /// whole, and the pointer to each command's help last.
  @Test(arguments: [true, false]) func theCommandsComeBeforeTheReferenceLists(shortcuts: Bool) async throws {
    let help = try await ShortcutTests.run(["--help"], shortcuts: shortcuts).stdout
    let usage = try #require(help.range(of: "\nUSAGE: tokenctl")).lowerBound
    let commands = try #require(help.range(of: "\nSUBCOMMANDS:\n")).lowerBound
    let environment = try #require(help.range(of: "\nEnvironment:\n")).lowerBound
    let statuses = try #require(help.range(of: "\nExit status:\n")).lowerBound
    let pointer = try #require(help.range(of: "See 'tokenctl help <subcommand>'")).lowerBound
    #expect(usage < commands && commands < environment && environment < statuses && statuses < pointer, "\(help)")
    for status in ExitStatus.allCases {
      #expect(help.contains("\n  \(status.rawValue) "), "exit status \(status.rawValue) is missing")
    }
    #expect(!help.contains("\n\n\n"), "\(help)")
  }

  @Test func aLongTermGoesAboveItsText() {
    let text = HelpList.render("List", [("LONG_NAME_HERE", "One two three four five six."), ("A", "x")], termWidth: 4)
    #expect(
      text == """
        List:
          LONG_NAME_HERE
                One two three four five six.
          A     x
        """)
  }
}
