import ArgumentParser
import Foundation
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenCtlCLI

/// `token ACCOUNT` and `credential OPERATION` skip swift-argument-parser: the
/// answers, exit statuses and stores must be those of the parsed commands, case by case.
@Suite struct ShortcutTests {
  static let now = Date(timeIntervalSince1970: 1_800_000_000)

  struct Outcome: Equatable, CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String
    var stored: [String]
    var description: String { "status \(status), stdout \(stdout.debugDescription), stderr \(stderr.debugDescription)" }
  }

  /// A store seeded with: graph `ada` valid for an hour, `old` expired with a refresh token
  /// (the built-in graph type has no client id, so refreshing it fails), `gone` expired
  /// without one (it needs a sign-in); github `1` (`octo`)
  /// for git; `twin` as both graph and oidc.
  static func seeded() throws -> InMemoryTokenStore.Backing {
    let backing = InMemoryTokenStore.Backing()
    let store = InMemoryTokenStore(group: "default", backing: backing)
    func save(_ type: String, _ id: String, _ name: String, expiresIn: Double, refresh: Bool = true) throws {
      try store.save(
        Account(type: type, id: id, name: name, group: "default", createdAt: now, updatedAt: now),
        tokens: TokenSet(
          accessToken: "ACCESS-\(id)", refreshToken: refresh ? "REFRESH" : nil,
          expiresAt: now.addingTimeInterval(expiresIn)))
    }
    try save("graph", "oid-1", "ada", expiresIn: 3600)
    try save("graph", "oid-2", "old", expiresIn: -60)
    try save("graph", "oid-3", "gone", expiresIn: -60, refresh: false)
    try save("github", "1", "octo", expiresIn: 3600)
    try save("graph", "oid-5", "twin", expiresIn: 3600)
    try save("oidc", "sub-5", "twin", expiresIn: 3600)
    return backing
  }

  static func run(
    _ arguments: [String], shortcuts: Bool, input: String = "", environment: [String: String] = [:]
  ) async throws -> Outcome {
    let backing = try seeded()
    let output = CapturedOutput()
    let home = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-shortcut-\(UUID().uuidString)")
    var environment = environment
    environment["XDG_CONFIG_HOME"] = home.appendingPathComponent("config").path
    environment["XDG_CACHE_HOME"] = home.appendingPathComponent("cache").path
    environment["XDG_RUNTIME_DIR"] = home.appendingPathComponent("runtime").path
    environment["XDG_CONFIG_DIRS"] = home.appendingPathComponent("etc").path
    environment["GIT_TERMINAL_PROMPT"] = "0"
    let context = CLIContext(
      registry: try BuiltinPlugins.registry(), makeStore: { InMemoryTokenStore(group: $0, backing: backing) },
      clock: FixedClock(now), environment: environment, output: output,
      readInput: { _ in Array(input.utf8) }, terminal: { nil })
    let status = await TokenCtl.main(arguments: arguments, context: context, shortcuts: shortcuts)
    defer { try? FileManager.default.removeItem(at: home) }
    let stored = try InMemoryTokenStore(group: "default", backing: backing).loadAll(AccountQuery()).map {
      "\($0.account.type):\($0.account.id) \($0.tokens.accessToken) \($0.tokens.expiresAt.map { "\($0)" } ?? "-")"
    }.sorted()
    return Outcome(status: status, stdout: output.stdout, stderr: output.stderr, stored: stored)
  }

  static func expectSame(
    _ arguments: [String], input: String = "", environment: [String: String] = [:], status: Int32,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    let fast = try await run(arguments, shortcuts: true, input: input, environment: environment)
    let parsed = try await run(arguments, shortcuts: false, input: input, environment: environment)
    #expect(fast == parsed, "\(arguments)", sourceLocation: sourceLocation)
    #expect(fast.status == status, "\(arguments): \(fast)", sourceLocation: sourceLocation)
  }

  @Test(arguments: [
    ("ada", Int32(0)), ("graph:ada", 0), ("oid-1", 0),
    // Expired, refreshable, but the type has no client id: the refresh path's error.
    ("graph:old", 14),
    ("gone", 4), ("nobody", 2), ("graph:nobody", 2), ("twin", 3), ("nope:ada", 2),
  ])
  func tokenAnswersAsTheParsedCommand(account: String, status: Int32) async throws {
    try await Self.expectSame(["token", account], status: status)
  }

  @Test func tokenInAnotherGroupAndAnEmptyGroupAnswerAsTheParsedCommand() async throws {
    try await Self.expectSame(["token", "ada"], environment: ["TOKENCTL_GROUP": "work"], status: 2)
    try await Self.expectSame(["token", "ada"], environment: ["TOKENCTL_GROUP": ""], status: 64)
  }

  @Test(arguments: [
    ("get", "protocol=https\nhost=github.com\n\n", Int32(0)),
    ("get", "protocol=https\nhost=example.org\n\n", 0),
    ("get", "protocol=https\n\n", 1),
    ("get", "protocol=https\nhost=github.com\npassword=x\u{0}\n\n", 1),
    ("erase", "protocol=https\nhost=github.com\npassword=ACCESS-1\n\n", 0),
    ("store", "protocol=https\nhost=github.com\nusername=oauth2\npassword=ACCESS-1\n\n", 0),
    ("frobnicate", "", 0),
  ])
  func credentialAnswersAsTheParsedCommand(operation: String, input: String, status: Int32) async throws {
    try await Self.expectSame(["credential", operation], input: input, status: status)
  }

  /// What the shortcut must leave to the parser: options, help, extra words.
  @Test(arguments: [
    ["token"], ["token", "--help"], ["token", "-h"], ["token", "help"], ["token", ""],
    ["token", "ada", "--min-valid", "7200"],
    ["token", "--group", "default", "ada"], ["token", "ada", "extra"], ["token", "--", "ada"], ["credential"],
    ["credential", "--help"], ["help", "token"], ["-v", "token", "ada"], ["token", "ada", "--verbose"],
  ])
  func otherCommandLinesAnswerAsTheParsedCommand(arguments: [String]) async throws {
    let fast = try await Self.run(arguments, shortcuts: true)
    let parsed = try await Self.run(arguments, shortcuts: false)
    #expect(fast == parsed)
  }

  /// The root help is printed without the parser, word for word as the parser prints it.
  @Test(arguments: [["--help"], ["-h"], ["help"], ["-q", "--help"]])
  func rootHelpAnswersAsTheParsedCommand(arguments: [String]) async throws {
    try await Self.expectSame(arguments, status: 0)
    #expect(TokenCtl.Shortcut(arguments.filter { $0 != "-q" }) == .help)
    #expect(try await Self.run(arguments, shortcuts: true).stdout.contains("USAGE: tokenctl"))
  }

  /// One recogniser of the lines answered before the parser: the shortcuts
  /// take what `ClientCommand` takes, options included, and the comparisons above hold.
  @Test func theShortcutsAreTheLinesClientCommandTakes() {
    #expect(
      TokenCtl.Shortcut(["token", "ada", "--min-valid", "7200", "--group", "work"])
        == .token(account: "ada", minValid: 7200, group: "work"))
    #expect(TokenCtl.Shortcut(["credential", "store", "--group", "g"]) == .credential(operation: "store", group: "g"))
    #expect(TokenCtl.Shortcut(["docker-credential", "get"]) == nil, "Docker's answer is the parsed command's")
    #expect(TokenCtl.Shortcut(["token", "https://example.org/"]) == nil, "a URL is chosen by the parsed command")
  }

  @Test func theShortcutsUseTheCommandsNames() {
    let names = TokenCtl.configuration.subcommands.compactMap { $0.configuration.commandName }
    #expect(names.contains("token") && names.contains("credential"))
  }
}
