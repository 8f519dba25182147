import Foundation
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenCtlCLI

/// A command's session reads config.toml once: however often the command asks
/// for the configured session, it gets the one it got first.
@Suite struct CommandSessionTests {
  @Test func aSecondConfiguredSessionIsTheFirst() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("config.toml")
    try Data("[types.graph]\nclient_id = \"first-app\"\n".utf8).write(to: URL(fileURLWithPath: path))
    let context = CLIContext(
      registry: try BuiltinPlugins.registry(), makeStore: { InMemoryTokenStore(group: $0) },
      clock: FixedClock(Date(timeIntervalSince1970: 1_800_000_000)),
      environment: ["TOKENCTL_CONFIG": path, "HOME": directory.url.path], output: CapturedOutput())
    let session = try CommandSession.open(group: nil, configured: false, in: context)
    #expect(session.configuration == nil)
    let first = try session.configured()
    #expect(first.configuration != nil)
    // Were the file read again, this would be an error (exit 14).
    try Data("this is not TOML = = =\n".utf8).write(to: URL(fileURLWithPath: path))
    let second = try session.configured()
    #expect(second === first)
    #expect(try first.configured() === first, "a configured session is its own")
  }
}
