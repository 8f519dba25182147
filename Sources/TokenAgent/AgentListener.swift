import AgentProtocol
import CLinux
import NativeAppSupport
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The agent's listening socket: bound here, or handed over by systemd (`LISTEN_FDS`),
/// and the lock file that keeps a second agent away.
///
/// The lock, not the socket, says whether an agent runs: a socket left by an agent that
/// was killed is stale once nobody holds the lock, and is replaced, so a crash never
/// blocks the next start.
public final class AgentListener: Sendable {
  public let descriptor: Int32
  public let path: String
  /// Whether the socket file is ours to remove at exit (not one systemd made).
  let ownsPath: Bool
  let lockDescriptor: Int32

  init(descriptor: Int32, path: String, ownsPath: Bool, lockDescriptor: Int32) {
    self.descriptor = descriptor
    self.path = path
    self.ownsPath = ownsPath
    self.lockDescriptor = lockDescriptor
  }

  /// Takes the lock beside `path`, then the socket systemd passed (`LISTEN_PID` is this
  /// process) or a new one bound at `path`: its folder private (0700), the socket 0600.
  /// `root` is tokenctl's own outermost runtime folder (see ``XDGDirectories``).
  public static func open(path: String, root: String?, environment: [String: String]) throws -> AgentListener {
    guard AgentSocketIO.address(path) != nil else {
      throw TokenKitError(
        .agentFailure, "the agent's socket path is too long for a UNIX socket (\(path.utf8.count) bytes)",
        recovery: "Choose a shorter path (at most 107 bytes).")
    }
    let folder = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    if !folder.isEmpty {
      try XDGDirectories.ensurePrivateDirectory(folder, within: root.flatMap { folder.hasPrefix($0) ? $0 : nil })
    }
    let lock = try takeLock(AgentSocketLocation.lockPath(socket: path))
    if let passed = systemdSocket(environment: environment) {
      _ = tokenctl_pass_credentials(passed)
      return AgentListener(descriptor: passed, path: path, ownsPath: false, lockDescriptor: lock)
    }
    // Whoever had this path before us is gone: we hold the lock.
    unlink(path)
    let descriptor: Int32
    do {
      descriptor = try listeningSocket(at: path, what: "the agent's socket")
    } catch {
      Glibc.close(lock)
      throw error
    }
    return AgentListener(descriptor: descriptor, path: path, ownsPath: true, lockDescriptor: lock)
  }

  /// A UNIX socket listening at `path` (`what` names it in errors), made the one way every
  /// socket of the agent is made: 0600 from the start, so that there is no moment in which
  /// another user could connect, and passing credentials (set before listen, so that no
  /// connection is accepted without them), so that each request's writer, not only the
  /// connection's opener, is known (``SentRequest``). A path bound and then not listened
  /// on is removed again.
  static func listeningSocket(at path: String, what: String) throws -> Int32 {
    guard var address = AgentSocketIO.address(path) else {
      throw TokenKitError(
        .agentFailure, "the path of \(what) is too long for a UNIX socket (\(path))",
        recovery: "Give the agent a socket with a shorter path (TOKENCTL_AGENT_SOCKET).")
    }
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else {
      throw TokenKitErrorFactory.io("create \(what)", errno: errno, kind: .agentFailure)
    }
    let mask = umask(0o177)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    let bindErrno = errno
    umask(mask)
    _ = tokenctl_pass_credentials(descriptor)
    guard bound == 0, listen(descriptor, 128) == 0 else {
      let failure = bound == 0 ? errno : bindErrno
      Glibc.close(descriptor)
      if bound == 0 { unlink(path) }
      throw TokenKitErrorFactory.io("listen on \(path)", errno: failure, kind: .agentFailure)
    }
    return descriptor
  }

  private static func takeLock(_ path: String) throws -> Int32 {
    let lock = try LockFile.open(path)
    let taken: Bool
    do { taken = try LockFile.lock(lock, path: path, waiting: .no) } catch {
      Glibc.close(lock)
      throw error
    }
    guard taken else {
      Glibc.close(lock)
      let running = readPID(path).map { " (pid \($0))" } ?? ""
      throw TokenKitError(
        .agentFailure, "an agent is already running for this socket\(running)",
        recovery: "Stop it first, or give this one another socket.")
    }
    // The lock file says who holds it, for the message above.
    ftruncate(lock, 0)
    let pid = Array("\(getpid())\n".utf8)
    _ = pid.withUnsafeBytes { write(lock, $0.baseAddress, $0.count) }
    return lock
  }

  /// The socket systemd passed to this process, if it did: one AF_UNIX stream socket at
  /// descriptor 3 (sd_listen_fds(3)).
  static func systemdSocket(environment: [String: String]) -> Int32? {
    guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid(),
      let count = environment["LISTEN_FDS"].flatMap(Int.init), count >= 1
    else { return nil }
    let descriptor: Int32 = 3
    var type: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == Int32(SOCK_STREAM.rawValue) else {
      return nil
    }
    _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    return descriptor
  }

  /// Removes the socket we made; the lock goes with the process.
  public func shutDown() {
    if ownsPath { unlink(path) }
    Glibc.close(descriptor)
  }

  /// The pid a lock file holds, for the message of a second agent.
  private static func readPID(_ path: String) -> String? {
    guard let file = try? PrivateFile.read(path, limit: 32, policy: .privateFile) else { return nil }
    let text = String(decoding: file.bytes.prefix { $0 != 10 }, as: UTF8.self)
    return text.isEmpty ? nil : text
  }
}
