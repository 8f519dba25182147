import CLinux
import ProcessRuntime
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// Refreshes in a child process that inherits the account's lock and outlives us (see
/// ``RefreshIsolation`` for why).
///
/// The child is this very program (`/proc/self/exe`), or the one ``program`` names, run
/// with ``RefreshChild``'s arguments: it reads the account from the keyring, refreshes, stores the answer, and only then writes
/// one ``RefreshReport`` on its standard output, a pipe to us, and exits. It runs in a
/// session of its own, ignoring SIGPIPE and SIGINT, so that neither our death nor a
/// Ctrl-C stops it between the exchange and the store. The lock stays held as long as
/// either of us has the descriptor open: if we die, the next caller waits for the child.
public struct ProcessRefreshIsolation: RefreshIsolation {
  /// The child's environment: ours, since it must find the same keyring and settings.
  public var environment: [String: String]
  /// Whether the child may write to our standard error: only when debugging, since its
  /// warnings would repeat ours.
  public var showsErrors = false
  /// Receives the child's warnings: failures that did not stop its refresh.
  public var warn: (@Sendable (String) -> Void)?
  /// The program that runs the child, when it is not this one (nil: this one, as the full
  /// program and the agent's own executable both can be the child).
  public var program: String?

  public init(environment: [String: String]) {
    self.environment = environment
  }

  public func refresh(
    _ key: AccountKey, group: String, scopes: ScopeSet?, holding lock: any AccountLockHandle
  ) async throws -> Bool {
    // A lock no other process can hold (an in-process one) cannot be handed on: the
    // refresh then runs here, as it would without isolation.
    guard let descriptor = lock.inheritableDescriptor else { return false }
    var ends: [Int32] = [-1, -1]
    guard tokenctl_pipe2(&ends, O_CLOEXEC) == 0 else {
      throw TokenKitError(.internalFailure, "could not refresh \(key): no pipe (\(String(cString: strerror(errno))))")
    }
    // Looked up now, not at start: the fast paths that never refresh pay nothing for it.
    guard let program = program ?? Self.runningProgram() else { return false }
    let arguments = [program] + RefreshChild.arguments(refreshing: key, group: group, scopes: scopes)
    let pid = ChildProcess.spawn(
      arguments, environment: environment, output: .descriptor(ends[1], keepErrors: showsErrors), reap: false,
      handOn: [descriptor],
      newSession: true)
    close(ends[1])
    guard let pid else {
      // Nothing was sent yet (the program may have been replaced by an upgrade under
      // us): refreshing here is still safe, only not proof against a kill.
      close(ends[0])
      return false
    }
    let (report, status) = await Self.collect(from: ends[0], pid: pid)
    for warning in try RefreshReport.decode(report, exitStatus: status, key: key) { warn?(warning) }
    return true
  }

  /// This program's file.
  private static func runningProgram() -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Everything the child writes until it closes its output, then its exit status, read
  /// on a thread of their own: both block.
  private static func collect(from descriptor: Int32, pid: pid_t) async -> ([UInt8], Int32) {
    await withCheckedContinuation { continuation in
      let started = DetachedThread.start {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < RefreshReport.maximumSize {
          let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
          if count < 0 && errno == EINTR { continue }
          guard count > 0 else { break }
          bytes += chunk[..<count]
        }
        close(descriptor)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        continuation.resume(returning: (bytes, status))
      }
      if !started {
        // No thread to spare: wait here; the child is short-lived.
        var status: Int32 = 0
        close(descriptor)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        continuation.resume(returning: ([], status))
      }
    }
  }
}
