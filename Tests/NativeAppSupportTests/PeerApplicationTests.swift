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
}
