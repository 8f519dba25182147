import Foundation
import TestSupport
import Testing

@testable import AgentFrontEnd
@testable import TokenCtlCLI

/// The front end prints `tokenctl --help` from its copy of the full program's text
/// (``RootHelp``) wherever the full program would print that very text, and runs the full
/// program wherever swift-argument-parser would lay the help out to another width.
@Suite struct RootHelpTests {
  /// The executables as built: the front end, and the full program beside it.
  static var frontEnd: String { TestProcess.frontEnd }
  static var fullProgram: String {
    URL(fileURLWithPath: TestProcess.frontEnd).deletingLastPathComponent().appendingPathComponent("tokenctl").path
  }

  @Test func theStoredHelpIsTheFullProgramsWordForWord() {
    let full = TokenCtl.commandsFirst(TokenCtl.helpMessage(columns: RootHelp.width))
    #expect(
      RootHelp.text == full,
      "Sources/AgentFrontEnd/RootHelp+Text.swift is out of date: run `make front-end-help`")
  }

  @Test func theCommandLinesOfTheHelpAreTheFullProgramsShortcut() {
    for arguments in [["--help"], ["-h"], ["help"]] {
      #expect(RootHelp.isRequested(by: arguments))
      #expect(TokenCtl.Shortcut(arguments) == .help)
    }
    for arguments in [["--help", "list"], ["list", "--help"], ["help", "list"], ["-v", "--help"], ["--HELP"], []] {
      #expect(!RootHelp.isRequested(by: arguments), "\(arguments)")
    }
  }

  /// COLUMNS as swift-argument-parser reads it (`Int(_:)`); else the terminal, here none.
  @Test func theWidthIsTheParsersWidth() {
    let cases: [(String?, Int)] = [(nil, 80), ("80", 80), ("+80", 80), ("0080", 80), ("100", 100), ("0", 0), ("x", 80)]
    for (columns, width) in cases {
      // Standard output is a terminal when the tests are run from one: only COLUMNS that
      // reads as a number is certain here.
      guard columns.flatMap(Int.init) != nil || isatty(1) == 0 else { continue }
      #expect(RootHelp.outputWidth { $0 == "COLUMNS" ? columns : nil } == width, "\(columns ?? "unset")")
    }
  }

  /// Into a file or a pipe, and on a terminal of each width: stdout, stderr and status.
  @Test(arguments: [["--help"], ["-h"], ["help"]])
  func theFrontEndPrintsWhatTheFullProgramPrints(_ arguments: [String]) async throws {
    for columns in [nil, "80", "100", "60", "x"] as [String?] {
      var environment = ProcessInfo.processInfo.environment
      environment["COLUMNS"] = columns
      let front = try await TestProcess.run(Self.frontEnd, arguments, environment: environment)
      let full = try await TestProcess.run(Self.fullProgram, arguments, environment: environment)
      #expect(front.status == 0 && full.status == 0, "\(arguments) COLUMNS=\(columns ?? "unset"): \(front.stderr)")
      #expect(front.stdout == full.stdout, "\(arguments) COLUMNS=\(columns ?? "unset")")
      #expect(front.stderr == full.stderr, "\(arguments) COLUMNS=\(columns ?? "unset")")
    }
    var environment = ProcessInfo.processInfo.environment
    environment["COLUMNS"] = nil
    for terminalColumns in [80, 120] {
      let front = try await Self.onTerminal(
        columns: terminalColumns, Self.frontEnd, arguments, environment: environment)
      let full = try await Self.onTerminal(
        columns: terminalColumns, Self.fullProgram, arguments, environment: environment)
      #expect(front.status == 0 && full.status == 0, "\(arguments) on \(terminalColumns) columns: \(front.stderr)")
      #expect(front.stdout == full.stdout, "\(arguments) on \(terminalColumns) columns")
    }
  }

  /// The front end alone (no full program beside it) answers where the width is the stored
  /// text's, and says it needs the full program anywhere else: so it answered itself above.
  @Test func theFrontEndAnswersAloneOnlyAtTheStoredWidth() async throws {
    let folder = try TemporaryDirectory()
    // Written by another process: a file this one held open for writing would be busy
    // (ETXTBSY) in any child forked meanwhile.
    let copied = try await TestProcess.run("/usr/bin/install", ["-m", "755", Self.frontEnd, folder.path("tokenctl")])
    try #require(copied.status == 0, "\(copied.stderr)")
    let alone = folder.path("tokenctl")
    var environment = ProcessInfo.processInfo.environment
    environment["COLUMNS"] = nil
    let piped = try await TestProcess.run(alone, ["--help"], environment: environment)
    #expect(piped.status == 0)
    #expect(piped.stdout == RootHelp.text + "\n")
    let narrow = try await Self.onTerminal(columns: 80, alone, ["-h"], environment: environment)
    #expect(narrow.status == 0, "\(narrow.stderr)")
    environment["COLUMNS"] = "100"
    let wide = try await TestProcess.run(alone, ["--help"], environment: environment)
    #expect(wide.status == 1)
    #expect(wide.stderr.contains("needs tokenctl's main program"), "\(wide.stderr)")
    environment["COLUMNS"] = nil
    let terminal = try await Self.onTerminal(columns: 120, alone, ["help"], environment: environment)
    #expect(terminal.status == 1)
    #expect(terminal.stderr.contains("needs tokenctl's main program"), "\(terminal.stderr)")
  }

  /// `executable` with standard output on a pseudo-terminal `columns` wide; what it wrote
  /// there (with the terminal's line endings), its standard error and status.
  static func onTerminal(
    columns: Int, _ executable: String, _ arguments: [String], environment: [String: String]
  ) async throws -> ProcessResult {
    let script = """
      import fcntl, os, struct, subprocess, sys, termios
      primary, secondary = os.openpty()
      fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, int(sys.argv[1]), 0, 0))
      child = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=secondary)
      os.close(secondary)
      out = b""
      while True:
          try:
              chunk = os.read(primary, 65536)
          except OSError:
              break
          if not chunk:
              break
          out += chunk
      sys.stdout.buffer.write(out)
      sys.exit(child.wait())
      """
    return try await TestProcess.run(
      "/usr/bin/python3", ["-c", script, "\(columns)", executable] + arguments, environment: environment)
  }
}
