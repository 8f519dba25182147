import Foundation
import TestSupport
import Testing
import TokenKit

/// `tokenctl token URL`: the account the helpers would answer for the URL's host, by the
/// same rule, for a script that knows where it is going rather than as whom.
@Suite(.serialized) struct TokenByURLTests {
  let fixture: ToolHelperFixture

  init() async throws {
    fixture = try await ToolHelperFixture.started(registry: "Tests/Support/docker-registry-server.py")
  }

  func token(_ argument: String) async throws -> ProcessResult {
    try await TestProcess.run(TestProcess.tokenctl, ["token", argument], environment: fixture.environment)
  }

  @Test func aURLNamesTheAccountItsHostIsServedWith() async throws {
    defer { fixture.cleanUp() }
    let ada = try await fixture.signIn(user: "ada")
    let one = try await token("https://\(fixture.host)/v2/")
    #expect(one.status == 0, "\(one.stderr)")
    #expect(one.stdout == (try fixture.token(ada)) + "\n")

    let other = try await token("https://registry.example.org/")
    #expect(other.status == 2)
    #expect(other.stderr.contains("no account type serves registry.example.org"), "\(other.stderr)")

    // Two accounts: the hint's URL form chooses, as it does in a git remote.
    let grace = try await fixture.signIn(user: "grace")
    let both = try await token("https://\(fixture.host)/")
    #expect(both.status == 3)
    #expect(both.stderr.contains("https://NAME@\(fixture.host)/"), "\(both.stderr)")
    let chosen = try await token("https://grace@\(fixture.host)/")
    #expect(chosen.status == 0, "\(chosen.stderr)")
    #expect(chosen.stdout == (try fixture.token(grace)) + "\n")
  }
}
