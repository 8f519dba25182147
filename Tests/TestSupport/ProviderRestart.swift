import Foundation

/// A restart of the Secret Service provider `Tests/Support/with-secret-service.sh` started,
/// as the user's session would restart it (Tests/Support/restart-secret-service.sh): for
/// tests of a process that lives across one. Only gnome-keyring and KWallet restart so.
public enum ProviderRestart {
  /// The command with-secret-service.sh gives (`TOKENCTL_TEST_RESTART_PROVIDER`): the
  /// script, the provider and with-secret-service.sh's folder, which has no spaces; nil
  /// outside with-secret-service.sh, and for KeePassXC.
  public static let command = ProcessInfo.processInfo.environment["TOKENCTL_TEST_RESTART_PROVIDER"]

  /// Whether the provider can be restarted here.
  public static var isAvailable: Bool { command != nil }

  /// Restarts the provider, and returns once the new one owns `org.freedesktop.secrets`.
  public static func run() async throws {
    guard let command else { throw TestFailure("no TOKENCTL_TEST_RESTART_PROVIDER: run inside with-secret-service.sh") }
    let words = command.split(separator: " ").map(String.init)
    let result = try await TestProcess.run(words[0], Array(words.dropFirst()), mergingStandardError: true)
    guard result.status == 0 else { throw TestFailure("restart-secret-service.sh failed: \(result.stdout)") }
  }
}
