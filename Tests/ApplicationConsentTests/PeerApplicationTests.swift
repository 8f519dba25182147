import ApplicationConsent
import Foundation
import NativeAppSupport
import TestSupport
import Testing

/// Which application a process is, against real processes: a program of our mount
/// namespace, a D-Bus proxy, a process of another mount namespace, and processes in
/// bubblewrap sandboxes with a `/.flatpak-info` as Flatpak makes it, or not.
@Suite(.timeLimit(.minutes(1))) struct PeerApplicationTests {
  static let sleep = URL(fileURLWithPath: "/usr/bin/sleep").resolvingSymlinksInPath().path

  /// Waits until process `pid` runs `executable` (a launcher such as unshare execs it).
  static func running(_ executable: String, pid: pid_t) async throws {
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
      if (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) == executable { return }
      try await Task.sleep(for: .milliseconds(10))
    }
    throw TestFailure("process \(pid) never ran \(executable)")
  }

  /// The child bubblewrap started in the sandbox (bwrap waits for it outside).
  static func sandboxed(by bwrap: pid_t) async throws -> pid_t {
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
      let children = (try? String(contentsOfFile: "/proc/\(bwrap)/task/\(bwrap)/children", encoding: .utf8)) ?? ""
      if let child = children.split(separator: " ").first.flatMap({ pid_t($0) }) {
        try await running(sleep, pid: child)
        return child
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    throw TestFailure("bwrap \(bwrap) started no sandbox")
  }

  /// A bubblewrap sandbox whose root holds /usr and whatever `root` adds, running sleep.
  static func sandbox(_ root: [String]) throws -> TestProcess {
    try TestProcess(
      "/usr/bin/bwrap",
      [
        "--die-with-parent", "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64",
        "/lib64", "--symlink", "usr/bin", "/bin",
      ] + root + ["--", sleep, "30"])
  }

  @Test func aProgramOfOurNamespaceIsItsExecutable() async throws {
    let sleeper = try TestProcess(Self.sleep, ["30"])
    defer { sleeper.terminate() }
    try await Self.running(Self.sleep, pid: sleeper.pid)
    #expect(
      PeerApplication.identify(pid: sleeper.pid, stillConnected: { true })
        == .success(PeerApplication(identity: .executable(Self.sleep), isOwn: false)))
    // A peer that hung up meanwhile may have left its pid to another process.
    #expect(PeerApplication.identify(pid: sleeper.pid, stillConnected: { false }) == .failure(.unreadable))
  }

  @Test func aDBusProxyOfOurNamespaceIsRefused() async throws {
    let scratch = try TemporaryDirectory()
    let proxy = try TestProcess(
      "/usr/bin/xdg-dbus-proxy", ["unix:path=\(scratch.path("no-bus"))", scratch.path("proxy"), "--filter"])
    defer { proxy.terminate() }
    try await Self.running("/usr/bin/xdg-dbus-proxy", pid: proxy.pid)
    #expect(
      PeerApplication.identify(pid: proxy.pid, stillConnected: { true })
        == .failure(.busProxy(executable: "/usr/bin/xdg-dbus-proxy")))
  }

  /// A namespace a program made itself (`unshare -Urm`, where it may bind any file over
  /// any path) is no sandbox that says which app it holds.
  @Test func aProcessOfAnotherMountNamespaceIsRefused() async throws {
    let unshared = try TestProcess("/usr/bin/unshare", ["-Urm", Self.sleep, "30"])
    defer { unshared.terminate() }
    try await Self.running(Self.sleep, pid: unshared.pid)
    #expect(
      PeerApplication.identify(pid: unshared.pid, stillConnected: { true })
        == .failure(.otherMountNamespace(executable: Self.sleep)))
  }

  @Test func aFlatpakSandboxIsItsApp() async throws {
    let scratch = try TemporaryDirectory()
    try "[Application]\nname=org.example.App\n".write(
      toFile: scratch.path("info"), atomically: false, encoding: .utf8)
    chmod(scratch.path("info"), 0o600)
    let bwrap = try Self.sandbox(["--ro-bind", scratch.path("info"), "/.flatpak-info"])
    defer { bwrap.terminate() }
    let app = try await Self.sandboxed(by: bwrap.pid)
    #expect(
      PeerApplication.identify(pid: app, stillConnected: { true })
        == .success(PeerApplication(identity: .flatpak(FlatpakAppID("org.example.App")!), isOwn: false)))
    // bwrap itself waits outside, in our namespace: a program like any other.
    #expect(
      PeerApplication.identify(pid: bwrap.pid, stillConnected: { true })
        == .success(PeerApplication(identity: .executable("/usr/bin/bwrap"), isOwn: false)))
  }

  @Test func aSandboxWhoseInfoFlatpakDidNotMakeIsRefused() async throws {
    let bwrap = try Self.sandbox(["--ro-bind", "/etc", "/etc", "--symlink", "/etc/hostname", "/.flatpak-info"])
    defer { bwrap.terminate() }
    let app = try await Self.sandboxed(by: bwrap.pid)
    #expect(
      PeerApplication.identify(pid: app, stillConnected: { true })
        == .failure(.untrustedFlatpakInfo(executable: Self.sleep, .symbolicLink)))
  }

  @Test func aProcessThatIsGoneIsUnreadable() async throws {
    let done = try TestProcess("/usr/bin/true", [])
    _ = await done.exitStatus()
    #expect(PeerApplication.identify(pid: done.pid, stillConnected: { true }) == .failure(.unreadable))
  }

  /// tokenctl's own clients, most of the agent's requests, are told by the file they run
  /// alone: the file at their path is never looked at (a path walk in /proc per
  /// request); another program's always is.
  @Test func theFileAtThePathIsLookedAtOnlyForOtherPrograms() {
    let tokenctl = FileID(device: 8, inode: 300), gdbus = FileID(device: 8, inode: 100)
    var looked = 0
    func look(_ id: FileID) -> FileID? {
      looked += 1
      return id
    }
    let own = PeerApplication.hostApplication(
      path: "/usr/bin/tokenctl", running: tokenctl, atPath: look(tokenctl), isOwn: { $0 == tokenctl })
    #expect(own == .success(PeerApplication(identity: .executable("/usr/bin/tokenctl"), isOwn: true)))
    #expect(looked == 0)
    let other = PeerApplication.hostApplication(
      path: "/usr/bin/gdbus", running: gdbus, atPath: look(gdbus), isOwn: { $0 == tokenctl })
    #expect(other == .success(PeerApplication(identity: .executable("/usr/bin/gdbus"), isOwn: false)))
    #expect(looked == 1)
  }

  /// A program of the host is the application its path names only when it runs the file
  /// at that path now, with no namespace involved: identities injected.
  @Test func aProgramIsItsPathOnlyWhenItRunsTheFileThereNow() {
    let gdbus = FileID(device: 8, inode: 100), python = FileID(device: 8, inode: 200)
    let tokenctl = FileID(device: 8, inode: 300)
    func told(_ path: String, running: FileID, atPath: FileID?) -> PeerIdentification {
      PeerApplication.hostApplication(path: path, running: running, atPath: atPath, isOwn: { $0 == tokenctl })
    }
    #expect(
      told("/usr/bin/gdbus", running: gdbus, atPath: gdbus)
        == .success(PeerApplication(identity: .executable("/usr/bin/gdbus"), isOwn: false)))
    // Python mounted over /usr/bin/gdbus, or a file swapped out of the path after it ran.
    #expect(
      told("/usr/bin/gdbus", running: python, atPath: gdbus)
        == .failure(.notTheFileAtItsPath(executable: "/usr/bin/gdbus")))
    #expect(
      told("/usr/bin/gdbus", running: gdbus, atPath: nil)
        == .failure(.notTheFileAtItsPath(executable: "/usr/bin/gdbus")))
    // Ours by file, whatever the path; not ours by path.
    #expect(
      told("/tmp/anything", running: tokenctl, atPath: nil)
        == .success(PeerApplication(identity: .executable("/tmp/anything"), isOwn: true)))
    #expect(
      told("/usr/bin/tokenctl", running: python, atPath: tokenctl)
        == .failure(.notTheFileAtItsPath(executable: "/usr/bin/tokenctl")))
    #expect(
      told("/usr/bin/xdg-dbus-proxy", running: gdbus, atPath: gdbus)
        == .failure(.busProxy(executable: "/usr/bin/xdg-dbus-proxy")))
  }

  /// The same for a real process: a copy of sleep is not sleep (another inode), and a
  /// process still running a file replaced at its path is not what the path names now.
  @Test func aProcessRunningAReplacedFileIsNotItsPath() async throws {
    let scratch = try TemporaryDirectory()
    let program = scratch.path("program")
    // Copied by cp, not here: a descriptor open for writing in this process would be
    // inherited by a child another test spawns meanwhile, and exec would fail (ETXTBSY).
    #expect(try await TestProcess.run("/usr/bin/cp", [Self.sleep, program]).status == 0)
    let process = try TestProcess(program, ["30"])
    defer { process.terminate() }
    try await Self.running(program, pid: process.pid)
    #expect(
      PeerApplication.identify(pid: process.pid, stillConnected: { true })
        == .success(PeerApplication(identity: .executable(program), isOwn: false)))
    #expect(try await TestProcess.run("/usr/bin/cp", [Self.sleep, program + ".new"]).status == 0)
    #expect(rename(program + ".new", program) == 0)
    #expect(
      PeerApplication.identify(pid: process.pid, stillConnected: { true })
        == .failure(.notTheFileAtItsPath(executable: program)))
  }
}
