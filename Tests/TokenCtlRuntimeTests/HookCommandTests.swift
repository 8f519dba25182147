import Foundation
import ProcessRuntime
import TestSupport
import Testing
import TokenCtlRuntime
import TokenKit

/// Polls `condition` every 5 ms for up to `seconds`.
private func eventually(within seconds: Double = 5, _ condition: () -> Bool) async -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while Date() < deadline {
    if condition() { return true }
    try? await Task.sleep(for: .milliseconds(5))
  }
  return condition()
}

@Suite struct HookCommandTests {
  static let account = Account(
    type: "corp", id: "user-42", name: "ada@example.org", group: "work", createdAt: Date(), updatedAt: Date())

  static let parent = [
    "PATH": "/usr/bin:/bin", "HOME": "/home/ada", "TOKENCTL_CLIENT_SECRET": "CLIENT-SECRET",
    "tokenctl_refresh_token": "RT", "TOKENCTL_PASSWORD": "pw", "TOKENCTL_AUTH_CODE": "code",
    "TOKENCTL_MESSAGE": "stale message from the parent", "TOKENCTL_CONFIG": "/etc/tokenctl.toml",
    "GIT_TERMINAL_PROMPT": "0",
  ]

  @Test func environmentDescribesTheEventAndHoldsNoSecret() {
    let hook = HookCommand(command: "true", environment: Self.parent)
    let environment = hook.environment(for: AccountEvent(.needsSignIn, Self.account, message: "invalid_grant"))
    #expect(environment["TOKENCTL_EVENT"] == "needs-sign-in")
    #expect(environment["TOKENCTL_ACCOUNT"] == "corp:ada@example.org")
    #expect(environment["TOKENCTL_ACCOUNT_TYPE"] == "corp")
    #expect(environment["TOKENCTL_ACCOUNT_ID"] == "user-42")
    #expect(environment["TOKENCTL_ACCOUNT_NAME"] == "ada@example.org")
    #expect(environment["TOKENCTL_GROUP"] == "work")
    #expect(environment["TOKENCTL_MESSAGE"] == "invalid_grant")
    #expect(environment["TOKENCTL_CLIENT_SECRET"] == nil)
    #expect(environment["tokenctl_refresh_token"] == nil)
    #expect(environment["TOKENCTL_PASSWORD"] == nil)
    #expect(environment["TOKENCTL_AUTH_CODE"] == nil)
    #expect(environment["TOKENCTL_CONFIG"] == "/etc/tokenctl.toml")
    #expect(environment["PATH"] == "/usr/bin:/bin")
    #expect(environment["HOME"] == "/home/ada")
    #expect(environment["GIT_TERMINAL_PROMPT"] == "0")
  }

  @Test func anEventWithoutMessageDropsAnInheritedOne() {
    let environment = HookCommand(command: "true", environment: Self.parent)
      .environment(for: AccountEvent(.refreshed, Self.account))
    #expect(environment["TOKENCTL_MESSAGE"] == nil)
    #expect(environment["TOKENCTL_EVENT"] == "refreshed")
  }

  @Test(arguments: [
    ("TOKENCTL_CLIENT_SECRET", false), ("TOKENCTL_ACCESS_TOKEN", false), ("Tokenctl_Secret", false),
    ("TOKENCTL_KEYRING_PASSWORD", false), ("TOKENCTL_DEVICE_CODE", false), ("TOKENCTL_GROUP", true),
    ("TOKENCTL_CONFIG", true), ("CLIENT_SECRET", true), ("GITHUB_TOKEN", true), ("PATH", true),
  ])
  func sanitizedDropsTokenctlSecrets(name: String, kept: Bool) {
    #expect((ChildEnvironment.sanitized([name: "v"])[name] != nil) == kept)
  }

  @Test func runsTheHookWithThatEnvironment() async throws {
    let scratch = try TemporaryDirectory()
    let output = scratch.path("env.txt")
    let hook = HookCommand(
      command: "env > '\(output).partial' && mv '\(output).partial' '\(output)'", environment: Self.parent)
    let pid = hook.run(AccountEvent(.revoked, Self.account, message: "signed out"))
    #expect(pid != nil)
    #expect(await eventually { FileManager.default.fileExists(atPath: output) })
    let lines = Set(try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map(String.init))
    #expect(lines.contains("TOKENCTL_EVENT=revoked"))
    #expect(lines.contains("TOKENCTL_ACCOUNT=corp:ada@example.org"))
    #expect(lines.contains("TOKENCTL_GROUP=work"))
    #expect(lines.contains("TOKENCTL_MESSAGE=signed out"))
    #expect(lines.contains("HOME=/home/ada"))
    #expect(!lines.contains { $0.hasPrefix("TOKENCTL_CLIENT_SECRET=") || $0.hasPrefix("tokenctl_refresh_token=") })
  }
}
