import NativeAppSupport

#if canImport(Glibc)
  import Glibc
#endif

/// A peer as far as it could be told: its application, or why it could not be.
public typealias PeerIdentification = Result<PeerApplication, UnidentifiedPeer>

/// The application behind a request (tokenctl-dbus(7), "Consent"): a program of the host
/// by the executable of the peer's process (/proc/PID/exe), or a Flatpak app by the app
/// id of the sandbox the process runs in (/proc/PID/root/.flatpak-info).
///
/// A pid alone proves nothing: the process may have exited and the pid gone to another.
/// So the process's start time is read before and after everything else, and the caller
/// checks that its peer is still connected afterwards: a process that still holds the
/// connection still owns its pid.
///
/// Which of the two a peer is, the mount namespace decides, as it decides what a path
/// means. In ours, the path of the executable is the program's, when the process runs
/// the file at that path now (``hostApplication(path:running:atPath:isOwn:)``). In
/// another, a path means what that namespace makes of it, so only a sandbox that says
/// which app it holds is told apart: Flatpak's, whose `/.flatpak-info` the app cannot
/// change (``FlatpakInfo``). xdg-desktop-portal tells apps the same way. A Flatpak app
/// reaches the session bus through xdg-dbus-proxy, which flatpak runs outside the app's sandbox but in a sandbox
/// of its own holding the same `/.flatpak-info`: so the proxy, whose pid is the one the
/// bus knows, is told as the app. A D-Bus proxy in our own namespace has no such file,
/// and every program behind it would be one application: it is refused, as is every
/// other namespace (``UnidentifiedPeer``).
public struct PeerApplication: Sendable, Hashable {
  /// Who it is: what grants name.
  public var identity: ApplicationIdentity
  /// One of tokenctl's own executables, which are always allowed; never a sandboxed app.
  public var isOwn: Bool

  public init(identity: ApplicationIdentity, isOwn: Bool) {
    self.identity = identity
    self.isOwn = isOwn
  }

  /// The application's name: its path, `flatpak:APP_ID` or `host:NAME`
  /// (``ApplicationIdentity/name``).
  public var name: String { identity.name }

  /// Whether it is a host the agent is forwarded to.
  public var isHost: Bool {
    if case .host = identity { return true }
    return false
  }

  /// A host the agent is forwarded to: never tokenctl's own, whatever program there
  /// asked, and whatever process the socket's peer is (the local `ssh`).
  public static func forwarded(_ host: HostName) -> PeerApplication {
    PeerApplication(identity: .host(host), isOwn: false)
  }

  /// The executables of D-Bus proxies, by file name: xdg-dbus-proxy, and the name flatpak
  /// shipped it under before 1.0. Behind one, every program is the proxy.
  public static let busProxies: Set<String> = ["xdg-dbus-proxy", "flatpak-dbus-proxy"]

  /// Whether `path` is a D-Bus proxy's executable (``busProxies``).
  public static func isBusProxy(_ path: String) -> Bool {
    path.split(separator: "/").last.map { busProxies.contains(String($0)) } ?? false
  }

  /// The application of process `pid`, which must run as this user, or why it cannot be
  /// told; callers treat the latter as an application nobody allowed.
  ///
  /// tokenctl's own clients are not dumpable, which closes /proc/PID/exe to other
  /// processes: they turn that off while they wait for the agent's answer (AgentConnection).
  public static func identify(pid: Int32, stillConnected: () -> Bool) -> PeerIdentification {
    // Everything is read relative to the process's folder, opened once: each path from
    // /proc cost a lookup of the pid (a fifth of the agent's time a request),
    // and a folder whose process has gone answers nothing more, even should its pid be
    // used again (the start time is compared all the same).
    guard pid > 0 else { return .failure(.unreadable) }
    let process = open("/proc/\(pid)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard process >= 0 else { return .failure(.unreadable) }
    defer { close(process) }
    guard let before = startTime(process: process) else { return .failure(.unreadable) }
    var info = stat()
    guard fstat(process, &info) == 0, info.st_uid == getuid() else { return .failure(.unreadable) }
    guard let target = readLink(at: process, "exe") else { return .failure(.unreadable) }
    let path = withoutDeletedSuffix(target)
    guard let ours = sameMountNamespace(process) else { return .failure(.unreadable) }
    let found: PeerIdentification
    if ours {
      // The file the process runs, wherever it is (the magic link is followed).
      guard let running = FileID.of("exe", inFolder: process) else { return .failure(.unreadable) }
      found = hostApplication(path: path, running: running, atPath: FileID.of(path), isOwn: OwnExecutables.contains)
    } else {
      guard let sandbox = sandboxAppID(process, executable: path) else { return .failure(.unreadable) }
      found = sandbox.map { PeerApplication(identity: .flatpak($0), isOwn: false) }
    }
    guard startTime(process: process) == before, stillConnected() else { return .failure(.unreadable) }
    return found
  }

  /// The application of a process of our mount namespace whose `/proc/PID/exe` names
  /// `path` and is the file `running`, when `atPath` is the file at `path` now; the one
  /// rule for programs of the host.
  ///
  /// - tokenctl's own executables are told by file alone (``OwnExecutables``).
  /// - Behind a D-Bus proxy every program is the proxy: refused.
  /// - Otherwise the process is the application `path` only if it runs the file at `path`
  ///   now. A grant names a path, and `/proc/PID/exe` names the path a file was run by in
  ///   the process's own mount namespace, with " (deleted)" once it is gone: a program
  ///   that mounts another file over `/usr/bin/gdbus` in a namespace of its own, or runs a
  ///   file that was then swapped out of the path, shows the path and is not the program
  ///   there. The mount namespace check refuses the first too; this rule holds without it.
  ///
  /// It is compared with the file at the path now, looked at for each request, not with
  /// one recorded when the grant was made: a grant means "whatever the system installs
  /// at that path", so a program upgraded in place keeps its grant, where a recorded
  /// inode would lose every grant at every upgrade and mean nothing in a grants file
  /// copied to another machine. The cost is that a process still running a file that was
  /// replaced since it started (a program not restarted after an upgrade) is refused
  /// until it is restarted: it cannot be told from a file swapped in on purpose.
  ///
  /// `atPath` is looked at only for a program that is not tokenctl's own: the agent's own
  /// clients, most of its requests, are spared the walk of the path, which they would pay on every answer.
  public static func hostApplication(
    path: String, running: FileID, atPath: @autoclosure () -> FileID?, isOwn: (FileID) -> Bool
  ) -> PeerIdentification {
    if isOwn(running) { return .success(PeerApplication(identity: .executable(path), isOwn: true)) }
    if isBusProxy(path) { return .failure(.busProxy(executable: path)) }
    guard atPath() == running else { return .failure(.notTheFileAtItsPath(executable: path)) }
    return .success(PeerApplication(identity: .executable(path), isOwn: false))
  }

  /// Whether process `pid` shares our mount namespace (the namespaces' nsfs inodes are
  /// equal); nil when that cannot be read.
  private static func sameMountNamespace(_ process: Int32) -> Bool? {
    guard let mine = ownMountNamespace, let theirs = FileID.of("ns/mnt", inFolder: process) else { return nil }
    return theirs == mine
  }

  /// Our own mount namespace, read once: tokenctl never enters another (`setns`, `unshare`).
  private static let ownMountNamespace = FileID.of("/proc/self/ns/mnt")

  /// The Flatpak app whose sandbox process `pid` runs in, or why there is none; nil when
  /// its root cannot be opened (it has gone, or is closed to us).
  private static func sandboxAppID(_ process: Int32, executable: String) -> Result<FlatpakAppID, UnidentifiedPeer>? {
    // The magic link is followed on purpose: it is the process's root.
    let root = openat(process, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
    guard root >= 0 else { return nil }
    defer { close(root) }
    switch FlatpakInfo.appID(inRoot: root) {
    case nil: return .failure(.otherMountNamespace(executable: executable))
    case .failure(let problem): return .failure(.untrustedFlatpakInfo(executable: executable, problem))
    case .success(let id): return .success(id)
    }
  }

  /// Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot. A
  /// pid and its start time name one process: `exec` keeps both, and a pid reused by
  /// another process has another start time.
  public static func startTime(_ pid: Int32) -> UInt64? {
    let process = open("/proc/\(pid)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard process >= 0 else { return nil }
    defer { close(process) }
    return startTime(process: process)
  }

  /// As ``startTime(_:)``, of the process whose /proc folder is open at `process`.
  static func startTime(process: Int32) -> UInt64? {
    let fd = openat(process, "stat", O_RDONLY | O_CLOEXEC)
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

  /// The path a `/proc/PID/exe` link names: the kernel appends " (deleted)" once the file
  /// was removed or replaced.
  public static func withoutDeletedSuffix(_ target: String) -> String {
    target.hasSuffix(" (deleted)") ? String(target.dropLast(" (deleted)".count)) : target
  }

  static func readLink(_ path: String) -> String? {
    readLink(at: AT_FDCWD, path)
  }

  /// The target of the link `name` in the folder open at `folder`.
  static func readLink(at folder: Int32, _ name: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlinkat(folder, name, &buffer, buffer.count - 1)
    guard length > 0 else { return nil }
    return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
