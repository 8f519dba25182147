import ApplicationConsent
import Foundation
import NativeAppSupport
import Synchronization
import TestSupport
import Testing
import TokenKit

@testable import TokenAgent

/// The consent gate on the test clock: a question nobody answers is not asked again on
/// every call (issue 23, item 6), but after a wait that grows.
@Suite struct ConsentGateTests {
  let directory: TemporaryDirectory
  let clock = TestClock()
  let gate: ConsentGate
  let asked = Counter()

  final class Counter: Sendable {
    private let value = Atomic(0)
    func add(_ n: Int, ordering: AtomicUpdateOrdering) { value.add(n, ordering: .relaxed) }
    func load(ordering: AtomicLoadOrdering) -> Int { value.load(ordering: .relaxed) }
  }

  init() throws {
    directory = try TemporaryDirectory()
    let home = directory.url.path
    let directories = XDGDirectories(environment: [
      "HOME": home, "XDG_STATE_HOME": home + "/state", "XDG_CONFIG_HOME": home + "/config",
      "XDG_CACHE_HOME": home + "/cache",
    ])
    gate = ConsentGate(
      grants: ApplicationGrants(directories: directories, warn: { _ in }), audit: AuditLog(directories: directories),
      clock: clock)
  }

  static let app = PeerApplication(identity: .executable("/usr/bin/some-app"), isOwn: false)
  static let account = Account(
    type: "github", id: "1", name: "ada", group: "default", createdAt: .distantPast, updatedAt: .distantPast)

  func admit() async -> Bool {
    await gate.admit(.success(Self.app), group: "default", account: Self.account, via: .dbus)
  }

  @Test func anUnansweredQuestionIsAskedAgainOnlyAfterAGrowingWait() async throws {
    let asked = self.asked
    gate.askWith { _, _, _ in
      asked.add(1, ordering: .relaxed)
      return .unanswered
    }
    #expect(await !admit())
    #expect(await !admit())
    #expect(asked.load(ordering: .relaxed) == 1, "one notification for calls in a row")
    clock.advance(by: 119)
    #expect(await !admit())
    #expect(asked.load(ordering: .relaxed) == 1)
    clock.advance(by: 2)
    #expect(await !admit())
    #expect(asked.load(ordering: .relaxed) == 2, "asked again after two minutes")
    clock.advance(by: 121)
    #expect(await !admit())
    #expect(asked.load(ordering: .relaxed) == 2, "then after four")
    clock.advance(by: 120)
    #expect(await !admit())
    #expect(asked.load(ordering: .relaxed) == 3)
  }

  @Test func anAnswerIsHeldByTheGrantsAndEndsTheBackoff() async throws {
    let answers = Mutex<[ConsentGate.Answer]>([.unanswered, .allowed])
    gate.askWith { _, _, _ in answers.withLock { $0.removeFirst() } }
    #expect(await !admit())
    clock.advance(by: 121)
    #expect(await admit())
    #expect(await admit(), "allowed from then on, without asking")
    #expect(answers.withLock { $0.isEmpty })
  }

  /// Waits until process `pid` runs `executable`, as /proc names it.
  static func running(_ executable: String, pid: pid_t) async throws {
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
      if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"),
        target == executable || target == executable + " (deleted)"
      {
        return
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    throw TestFailure("process \(pid) never ran \(executable)")
  }

  /// A grant names a path, and holds for the file at that path now (issue 23, item 3): a
  /// process still running a file that was replaced there is not that application, though
  /// /proc names the path (with " (deleted)", which is all a bind mount or a swap needs to
  /// pass for it); a process started from the new file is. No namespace is involved.
  @Test func aGrantHoldsForTheFileAtItsPathNowNotForWhatOnceWasThere() async throws {
    let sleep = URL(fileURLWithPath: "/usr/bin/sleep").resolvingSymlinksInPath().path
    let program = directory.path("app")
    // Copied by cp, not here: a descriptor open for writing in this process would be
    // inherited by a child another test spawns meanwhile, and exec would fail (ETXTBSY).
    #expect(try await TestProcess.run("/usr/bin/cp", [sleep, program]).status == 0)
    let before = try TestProcess(program, ["30"])
    defer { before.terminate() }
    try await Self.running(program, pid: before.pid)
    try gate.grants.allow(application: program, group: "default", accounts: nil, at: clock.now)
    func admitted(_ pid: pid_t) async -> Bool {
      await gate.admit(
        PeerApplication.identify(pid: pid, stillConnected: { true }), group: "default", account: Self.account,
        via: .socket)
    }
    #expect(await admitted(before.pid), "the granted program")

    // Another file put in its place, as an upgrade does it (a new file renamed over it).
    #expect(try await TestProcess.run("/usr/bin/cp", [sleep, program + ".new"]).status == 0)
    #expect(rename(program + ".new", program) == 0)
    #expect(await !admitted(before.pid), "no longer the file the grant's path names")
    let after = try TestProcess(program, ["30"])
    defer { after.terminate() }
    try await Self.running(program, pid: after.pid)
    #expect(await admitted(after.pid), "the upgraded program still has its grant")
  }

  @Test(arguments: [(1, 120.0), (2, 240), (3, 480), (6, 3600), (40, 3600)] as [(Int, Double)])
  func theWaitDoublesUpToAnHour(count: Int, wait: Double) {
    #expect(PromptBackoff().wait(after: count) == wait)
  }
}
