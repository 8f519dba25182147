import Foundation
import TestSupport
import Testing

/// A command's world is built once: config.toml and each account type
/// file are opened at most once per process, counted by strace on the real git helper
/// through a `get` that refreshes (the costliest path: sign-in offer aside, every piece
/// of the world is needed there, in this process and in the refresh child).
@Suite(.serialized) struct FileReadCountTests {
  init() throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    _ = try TestProcess.which("strace")
  }

  @Test func aRefreshingGetOpensConfigAndTypeFilesOncePerProcess() async throws {
    let setup = try await GitCredentialTests.Setup()
    defer { setup.cleanUp() }
    let account = try await setup.seed(name: "ada")
    let config = setup.home.appendingPathComponent("config/tokenctl/config.toml")
    try "# read once\n".write(to: config, atomically: false, encoding: .utf8)
    let trace = setup.home.appendingPathComponent("trace").path
    // The direct path's reads are what is counted: an agent would read the files instead.
    var environment = setup.environment
    environment["TOKENCTL_AGENT"] = "0"
    let result = try await TestProcess.run(
      "strace", ["-f", "-qq", "-e", "trace=openat,open", "-o", trace, GitCredentialTests.helper, "get"],
      environment: environment, stdin: "protocol=http\nhost=127.0.0.1\n\n")
    #expect(result.status == 0, "\(result.stderr)")
    let stored = try #require(try setup.store.load(account.key))
    #expect(stored.tokens.accessToken != "expired-access-token", "the get refreshed")
    #expect(result.stdout.contains("password=\(stored.tokens.accessToken)\n"))

    let opens = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
    for file in [config.path, setup.home.appendingPathComponent("config/tokenctl/types/gitlocal.toml").path] {
      var perProcess: [Substring: Int] = [:]
      for line in opens where line.contains("\"\(file)\"") && !line.contains("= -1") {
        perProcess[line.prefix { $0 != " " }, default: 0] += 1
      }
      #expect(!perProcess.isEmpty, "\(file) was never opened")
      #expect(perProcess.values.allSatisfy { $0 == 1 }, "\(file) opened per process: \(perProcess)")
    }
  }
}
