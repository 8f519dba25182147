import Foundation
import Testing
import TokenCtlCLI
import TokenKit
import TokenStoreTesting

/// What a command does with a config.toml it must refuse; reading the file is tested in
/// AccountTypeFilesTests.
@Suite struct ConfigurationCommandTests {
  /// The command fails as for any unusable configuration (exit 14), before it does anything.
  @Test func aCommandRefusesAConfigurationOthersMayWrite() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "tokenctl-config-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("config.toml").path
    try Data("[types.graph]\nclient_id = \"attacker-app\"\n".utf8).write(to: URL(fileURLWithPath: path))
    try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: path)
    let output = CapturedOutput()
    let context = CLIContext(
      registry: try BuiltinPlugins.registry(), makeStore: { InMemoryTokenStore(group: $0) },
      clock: FixedClock(Date(timeIntervalSince1970: 1_800_000_000)),
      environment: ["TOKENCTL_CONFIG": path, "HOME": "/nonexistent"], output: output)
    let status = await TokenCtl.main(arguments: ["types"], context: context)
    #expect(status == ExitStatus.notConfigured.rawValue, "\(output.stderr)")
    #expect(output.stderr.contains("tokenctl: \(path) may be changed by other users (mode 666, "))
    #expect(output.stderr.contains("hint: Run `chmod go-w \(path)`."))
    #expect(!output.stdout.contains("attacker-app"))
  }
}
