import Foundation
import TokenCtlCLI
import TokenKit
import TokenStoreTesting

/// The commands in-process against a throw-away home (its config, cache and runtime
/// folders), an in-memory keyring, a fixed clock and a transport the test chooses: for
/// tests of what a command sends and prints given a config.toml or a type file. No
/// browser, terminal or pasted line is available; `input` is what standard input holds.
struct CommandSandbox {
  static let now = Date(timeIntervalSince1970: 1_800_000_000)

  let backing = InMemoryTokenStore.Backing()
  let home = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-sandbox-\(UUID().uuidString)")

  /// The default group's store, as the commands see it.
  var store: InMemoryTokenStore { InMemoryTokenStore(group: "default", backing: backing) }

  /// Writes `text` at `path` under the sandbox's `~/.config/tokenctl`, creating folders.
  func writeConfig(_ text: String, to path: String = "config.toml") throws {
    let file = home.appendingPathComponent("config/tokenctl/\(path)")
    try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try text.write(to: file, atomically: true, encoding: .utf8)
  }

  func run(
    _ arguments: [String], transport: any HTTPTransport, input: String = ""
  ) async throws -> (status: Int32, stdout: String, stderr: String) {
    let output = CapturedOutput()
    let backing = backing
    let context = CLIContext(
      registry: try BuiltinPlugins.registry(), makeStore: { InMemoryTokenStore(group: $0, backing: backing) },
      clock: FixedClock(Self.now),
      environment: [
        "HOME": home.path, "XDG_CONFIG_HOME": home.appendingPathComponent("config").path,
        "XDG_CACHE_HOME": home.appendingPathComponent("cache").path,
        "XDG_RUNTIME_DIR": home.appendingPathComponent("run").path,
      ],
      output: output, transport: transport, openBrowser: { _, _ in nil }, readLine: { nil },
      readInput: { _ in Array(input.utf8) }, sleep: { _ in throw CancellationError() }, terminal: { nil })
    let status = await TokenCtl.main(arguments: arguments, context: context)
    return (status, output.stdout, output.stderr)
  }
}
