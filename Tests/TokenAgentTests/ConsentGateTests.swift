import ApplicationConsent
import Foundation
import NativeAppSupport
import Synchronization
import TestSupport
import Testing
import TokenKit

@testable import TokenAgent

/// The consent gate on the test clock: a question nobody answers is not asked again on
/// every call, but after a wait that grows.
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

  /// A grant names a path, and holds for the file at that path now: a
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

  /// Asks with `answer`, counting the questions.
  func answering(_ answer: ConsentGate.Answer) {
    let asked = self.asked
    gate.askWith { _, _, _ in
      asked.add(1, ordering: .relaxed)
      return answer
    }
  }

  var questions: Int { asked.load(ordering: .relaxed) }

  @Test func tokenctlsOwnProgramsPassWithoutAQuestion() async {
    answering(.denied)
    let own = PeerApplication(identity: .executable("/usr/bin/git-credential-tokenctl"), isOwn: true)
    #expect(await gate.admit(.success(own), group: "default", account: Self.account, via: .socket))
    #expect(questions == 0)
  }

  @Test func aCallerThatCannotBeToldIsRefusedWithoutAQuestion() async {
    answering(.allowed)
    #expect(await !gate.admit(.failure(.unreadable), group: "default", account: Self.account, via: .socket))
    #expect(
      await !gate.admit(
        .failure(.busProxy(executable: "/usr/bin/xdg-dbus-proxy")), group: "default",
        account: Self.account, via: .dbus))
    #expect(questions == 0)
  }

  @Test func aGrantOrADenialDecidesWithoutAQuestion() async throws {
    answering(.unanswered)
    try gate.grants.allow(
      application: "/usr/bin/some-app", group: "default",
      accounts: [GrantedAccount(key: Self.account.key, name: Self.account.qualifiedName)], at: clock.now)
    #expect(await admit(), "granted")
    let other = Account(
      type: "github", id: "2", name: "grace", group: "default", createdAt: .distantPast, updatedAt: .distantPast)
    #expect(await !gate.admit(.success(Self.app), group: "work", account: other, via: .dbus), "not granted: asked")
    #expect(questions == 1)
    try gate.grants.deny(application: "/usr/bin/some-app", group: "default", at: clock.now)
    #expect(await !admit(), "denied")
    #expect(questions == 1, "a denial needs no question")
  }

  @Test func anAnswerIsKeptAsAGrantOrADenial() async throws {
    answering(.allowed)
    #expect(await admit())
    #expect(await admit())
    #expect(questions == 1, "asked once, then allowed by the grant")
    #expect(
      gate.grants.decision(application: "/usr/bin/some-app", group: "default", account: Self.account.key)
        == .allowed)

    let other = PeerApplication(identity: .executable("/usr/bin/other-app"), isOwn: false)
    answering(.denied)
    #expect(await !gate.admit(.success(other), group: "default", account: Self.account, via: .dbus))
    #expect(await !gate.admit(.success(other), group: "default", account: Self.account, via: .dbus))
    #expect(questions == 2, "asked once, then refused by the denial")
    #expect(
      gate.grants.decision(application: "/usr/bin/other-app", group: "default", account: Self.account.key)
        == .denied)
  }

  /// Without a notification server nobody can be asked: refused, and no backoff, so the
  /// question comes as soon as there is a way to ask it.
  @Test func withNobodyToAskItRefusesAndAsksOnceItCan() async {
    #expect(await !admit(), "no way to ask at all")
    answering(.notAsked)
    #expect(await !admit())
    answering(.allowed)
    #expect(await admit(), "asked at once, with no wait after the questions nobody could be shown")
    #expect(questions == 2)
  }

  @Test func callersAskingTogetherShareOneQuestion() async {
    let asked = self.asked
    let release = AsyncStream<Void>.makeStream()
    gate.askWith { _, _, _ in
      asked.add(1, ordering: .relaxed)
      for await _ in release.stream { break }
      return .allowed
    }
    async let first = admit()
    async let second = admit()
    async let third = admit()
    // The question is on screen (counted) before the answer comes.
    while questions == 0 { await Task.yield() }
    release.continuation.yield()
    #expect(await [first, second, third] == [true, true, true])
    #expect(questions == 1, "one notification for the three")
  }

  @Test(arguments: [(1, 120.0), (2, 240), (3, 480), (6, 3600), (40, 3600)] as [(Int, Double)])
  func theWaitDoublesUpToAnHour(count: Int, wait: Double) {
    #expect(PromptBackoff().wait(after: count) == wait)
  }

  /// `tokenctl allow` in a terminal while the question is on screen: the grants file
  /// decides, the caller gets its answer at once, and the notification is withdrawn (its
  /// ask cancelled) instead of staying up with Allow and Deny still offered.
  @Test func aGrantWrittenWhileTheQuestionIsUpAnswersItAndWithdrawsTheNotification() async throws {
    let sleep = ManualSleep(clock: clock)
    let watching = ConsentGate(grants: gate.grants, audit: gate.audit, clock: clock, sleep: sleep.sleep)
    let (shown, showing) = AsyncStream<Void>.makeStream()
    let withdrawn = Counter()
    watching.askWith { _, _, _ in
      showing.yield()
      // On screen until withdrawn; a minute of real time bounds it when nothing does (a
      // few seconds were too few on a loaded machine: the question ended unanswered
      // before the gate's look at the grants file came round).
      let deadline = ContinuousClock.now + .seconds(60)
      while !Task.isCancelled && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
      if Task.isCancelled { withdrawn.add(1, ordering: .relaxed) }
      return .unanswered
    }
    let admitted = Task {
      await watching.admit(.success(Self.app), group: "default", account: Self.account, via: .dbus)
    }
    for await _ in shown { break }
    // What `tokenctl allow` writes, through the grants file of its own.
    let home = directory.url.path
    let directories = XDGDirectories(environment: ["HOME": home, "XDG_STATE_HOME": home + "/state"])
    try ApplicationGrants(directories: directories, warn: { _ in }).allow(
      application: Self.app.name, group: "default",
      accounts: [GrantedAccount(key: Self.account.key, name: Self.account.qualifiedName)], at: clock.now)
    let done = Counter()
    let answer = Task {
      defer { done.add(1, ordering: .relaxed) }
      return await admitted.value
    }
    // The gate's next look at the file: each wait it asks for ends now.
    while done.load(ordering: .relaxed) == 0 {
      sleep.elapse()
      try await Task.sleep(for: .milliseconds(5))
    }
    #expect(await answer.value, "the grant written meanwhile answers the question")
    #expect(withdrawn.load(ordering: .relaxed) == 1, "the notification was withdrawn")
    #expect(await watching.admit(.success(Self.app), group: "default", account: Self.account, via: .dbus))
  }
}
