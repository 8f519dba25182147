import Foundation
import GLibBus
import TestSupport
import Testing
import TokenKit

@testable import SecretServiceStore

/// The unlock's prompt flow against a stand-in Secret Service on a bus of the test's own
/// (Tests/Support/secret-service-prompts.py), whose prompts complete as the test chooses. The
/// answer, the prompt's `Completed` signal, is waited for on a loop thread of its own
/// (GLibBus's `MainLoopThread`) and read as a `BusValue`. An exit test: the store finds
/// the bus only through the process's environment.
@Suite(ExitTestGate.trait) struct SecretServiceUnlockTests {
  @Test func thePromptsAnswerIsReadAsTheSpecWritesIt() async throws {
    try await againstTheStandIn(.unlockThroughPrompts)
  }

  /// The read path's calls go over GDBus without libsecret, which registers the Secret
  /// Service's error names: a reply of `org.freedesktop.Secret.Error.IsLocked` must still
  /// read as a locked keyring (exit 7, with its remedy), not as a failure of the store.
  @Test func aLockedItemOnTheReadPathIsALockedKeyring() async throws {
    try await againstTheStandIn(.readALockedItem)
  }

  /// What a test checks in its own process: named, since an exit test takes only values.
  enum Check: String, Codable, Sendable {
    case unlockThroughPrompts, readALockedItem
  }

  /// Runs `check` in a process of its own, on a private bus whose Secret Service is the
  /// stand-in.
  func againstTheStandIn(_ check: Check) async throws {
    let service = FileManager.default.currentDirectoryPath + "/Tests/Support/secret-service-prompts.py"
    let session = try await PrivateSession.started(
      .busWithoutSecretService,
      services: ["org.freedesktop.secrets.service": "[D-BUS Service]\nName=org.freedesktop.secrets\nExec=\(service)\n"])
    defer { session.stop() }
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      [environment = session.environment as [String: String], check] in
      OwnProcess.run(
        on: environment,
        check == .unlockThroughPrompts
          ? SecretServiceUnlockTests.unlockThroughPrompts : SecretServiceUnlockTests.readALockedItem)
    }
    OwnProcess.report(result)
  }

  static func readALockedItem(_ session: PrivateSession) throws {
    try GLibBridge.requireGIO()
    let error = #expect(throws: TokenKitError.self) {
      try SecretServiceBus.withSessionBus { bus in
        _ = try bus.secrets(of: ["/org/freedesktop/secrets/collection/login/1"], session: "/", timeout: 5000)
      }
    }
    #expect(error?.code == .keyringLocked, "\(String(describing: error))")
  }

  static func unlockThroughPrompts(_ session: PrivateSession) throws {
    try GLibBridge.requireGIO()
    let prompting = KeyringPrompting(timeout: .seconds(2)) { _ in }
    /// Unlocks an object whose name the stand-in answers its prompt by.
    func unlock(answering answer: String) throws {
      try SecretServiceBus.withSessionBus { bus in
        try MainContext.withOwn {
          try SecretServiceUnlock.unlock(
            ["/org/freedesktop/secrets/collection/\(answer)"], names: ["Login"], bus: bus, prompting: prompting)
        }
      }
    }

    try unlock(answering: "allowed")
    let dismissed = #expect(throws: TokenKitError.self) { try unlock(answering: "dismissed") }
    #expect(dismissed?.code == .keyringLocked)
    #expect(dismissed?.message.contains("was dismissed") == true, "\(String(describing: dismissed))")
    // A `Completed` whose body is not the spec's (bv) is no answer: read as a boolean in
    // place, it was taken for "not dismissed", and the keyring for unlocked. The prompt is
    // waited out, then dismissed.
    let malformed = #expect(throws: TokenKitError.self) { try unlock(answering: "malformed") }
    #expect(malformed?.code == .keyringLocked)
    #expect(malformed?.message.contains("got no answer within 2 s") == true, "\(String(describing: malformed))")
  }
}
