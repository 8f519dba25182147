#if canImport(Glibc)
  import Glibc
#endif

/// The application behind a request: the executable of the peer's process, read from
/// /proc/PID/exe (tokenctl-agent(1), "Consent").
///
/// A pid alone proves nothing: the process may have exited and the pid gone to another.
/// So the process's start time is read before and after the executable, and the caller
/// checks that its peer is still connected afterwards: a process that still holds the
/// connection still owns its pid.
public struct PeerApplication: Sendable, Hashable {
  /// The executable's path, as the kernel names it (symlinks resolved: `python3` is
  /// `/usr/bin/python3.11`), without the ` (deleted)` of an upgraded binary still running.
  public var executable: String
  /// One of tokenctl's own executables, which are always allowed.
  public var isOwn: Bool

  public init(executable: String, isOwn: Bool) {
    self.executable = executable
    self.isOwn = isOwn
  }

  /// The application of process `pid`, which must run as this user; nil when it cannot
  /// be told (gone, recycled, another user's, or its /proc entry closed to us), which
  /// callers treat as an application nobody allowed.
  ///
  /// tokenctl's own clients are not dumpable, which closes /proc/PID/exe to other
  /// processes: they turn that off while they wait for the agent's answer (AgentConnection).
  public static func identify(pid: Int32, stillConnected: () -> Bool) -> PeerApplication? {
    guard pid > 0, let before = startTime(pid) else { return nil }
    var info = stat()
    guard stat("/proc/\(pid)", &info) == 0, info.st_uid == getuid() else { return nil }
    guard let target = readLink("/proc/\(pid)/exe") else { return nil }
    var executable = stat()
    let statted = stat("/proc/\(pid)/exe", &executable) == 0
    guard startTime(pid) == before, stillConnected() else { return nil }
    let path = target.hasSuffix(" (deleted)") ? String(target.dropLast(" (deleted)".count)) : target
    let own = statted && ownExecutables.contains(FileIdentity(executable))
    return PeerApplication(executable: path, isOwn: own)
  }

  /// tokenctl and the git helper beside it, by device and inode: the same file under
  /// another path (a symlink, a bind mount) is still ours.
  private static let ownExecutables: Set<FileIdentity> = {
    var identities: Set<FileIdentity> = []
    guard let own = readLink("/proc/self/exe") else { return identities }
    let folder = own.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    for path in ["/proc/self/exe", folder + "/tokenctl", folder + "/git-credential-tokenctl"] {
      var info = stat()
      if stat(path, &info) == 0 { identities.insert(FileIdentity(info)) }
    }
    return identities
  }()

  private struct FileIdentity: Hashable {
    var device: UInt64
    var inode: UInt64
    init(_ info: stat) {
      device = UInt64(info.st_dev)
      inode = UInt64(info.st_ino)
    }
  }

  /// Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot.
  static func startTime(_ pid: Int32) -> UInt64? {
    let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 1024)
    let count = read(fd, &bytes, bytes.count)
    guard count > 0 else { return nil }
    // The command name (field 2) is in parentheses and may hold anything, ')' included:
    // the fields after it start after the last ')'.
    guard let close = bytes[..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
    let fields = bytes[(close + 1)..<count].split(separator: UInt8(ascii: " "))
    // After the ')' come fields 3, 4, …: field 22 is the 20th.
    guard fields.count >= 20 else { return nil }
    return UInt64(String(decoding: fields[19], as: UTF8.self))
  }

  private static func readLink(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink(path, &buffer, buffer.count - 1)
    guard length > 0 else { return nil }
    return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
