import Foundation
import TestSupport
import Testing

/// The tests of the keyring store write to whatever Secret Service the session bus offers.
/// They run only inside `Tests/Support/with-private-keyring.sh` (as `make test` does), which
/// sets `TOKENCTL_TEST_KEYRING=1`, so that they can never write to a user's real keyring.
enum TestKeyring {
  static var isPrivate: Bool { ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1" }

  static func require() throws {
    try #require(
      isPrivate,
      "These tests write to the keyring: run them with `make test`, which gives them a throw-away one.")
  }

  /// Runs `secret-tool` on the test keyring.
  static func secretTool(_ arguments: [String], stdin: String = "") async throws -> (status: Int32, stdout: String) {
    // `search` prints attributes on standard error; GLib flushes every line, so one file
    // keeps them in order.
    let result = try await TestProcess.run("/usr/bin/secret-tool", arguments, stdin: stdin, mergingStandardError: true)
    return (result.status, result.stdout)
  }

  /// The items `secret-tool search --all` finds for `attributes`, each as its printed
  /// fields (`label`, `attribute.type`, `secret`, …).
  static func items(_ attributes: [String: String]) async throws -> [[String: String]] {
    let arguments =
      ["search", "--all", "--unlock"] + attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
    let output = try await secretTool(arguments).stdout
    var items: [[String: String]] = []
    for line in output.split(separator: "\n") {
      if line.hasPrefix("[") {
        items.append([:])
      } else if let equals = line.range(of: " = "), !items.isEmpty {
        items[items.count - 1][String(line[..<equals.lowerBound])] = String(line[equals.upperBound...])
      }
    }
    return items
  }
}
