import Foundation
import TestSupport
import Testing

/// The two halves of an exit test, a test body that runs in a process of its own.
enum OwnProcess {
  /// Runs `body` in the exit test's process, with the test's private session (from its
  /// `environment`) as the process's session bus. An error it throws becomes an issue,
  /// which Swift Testing hands to the parent process like any other; thrown out of the
  /// exit test itself, it would end the process with a signal and no word of what went
  /// wrong.
  static func run(on environment: [String: String], _ body: (PrivateSession) throws -> Void) {
    closeInheritedDescriptorsOnExec()
    let session = PrivateSession(attachingTo: environment)
    session.becomeTheProcessSessionBus()
    do { try body(session) } catch { Issue.record(error) }
  }

  /// Adds what the exit test's process wrote on standard error to the test's result when
  /// the process did not exit as expected (a crash says little more than its signal).
  static func report(_ result: ExitTest.Result?) {
    guard let result, result.exitStatus != .exitCode(0) else { return }
    Issue.record("the test's own process wrote: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
  }

  /// Marks the descriptors this process inherited (Swift Testing's back channel to the
  /// parent among them) close-on-exec. The parent reads the back channel until every copy
  /// of it is closed, and gnome-keyring-daemon, which this process may start (`--replace`)
  /// and which outlives it until the parent stops the bus, would otherwise keep one: the
  /// test would wait forever.
  private static func closeInheritedDescriptorsOnExec() {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    for descriptor in descriptors.compactMap(Int32.init) where descriptor > 2 {
      let flags = fcntl(descriptor, F_GETFD)
      if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
    }
  }
}
