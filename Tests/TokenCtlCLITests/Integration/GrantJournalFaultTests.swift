import Foundation
import NativeAppSupport
import TestSupport
import Testing
import TokenCtlRuntime
import TokenKit

/// The grant journal's own faults, against the test authorization server as it ships, which
/// rotates refresh tokens, detects their reuse, and deletes the access token beside a
/// rotated one (Tests/AuthServer), with the debug build's own
/// refresh pause (``RefreshTestPause``): no timing decides anything.
///
/// - A runtime folder on a disk gets no journal, so no refresh token reaches it; one on a
///   tmpfs keeps the journal.
/// - An entry that exists but cannot be read (truncated, overwritten, emptied, opened to
///   others, of an unknown version) gets no dead token handed out: the account needs a
///   sign-in, says why, and the entry is set aside.
/// - A journal that cannot be written (its tmpfs full) is said, once per command on
///   standard error, and once in the agent's log.
@Suite(.serialized, .timeLimit(.minutes(10))) struct GrantJournalFaultTests {
  enum Path: String, CaseIterable, Sendable {
    case direct, agent
  }

  enum Damage: String, CaseIterable, Sendable {
    case truncated, overwritten, emptied
    case openToOthers = "made 0644"
    case unknownVersion = "unknown version"
  }

  struct Case: Sendable, CustomStringConvertible {
    var path: Path
    var damage: Damage
    var description: String { "\(path.rawValue) × \(damage.rawValue)" }
  }

  static let damageCases = Path.allCases.flatMap { path in Damage.allCases.map { Case(path: path, damage: $0) } }

  /// A signed-in account at the test server, with a private keyring and `runtime` as
  /// `XDG_RUNTIME_DIR`.
  struct World {
    let server: AuthServer
    let session: PrivateSession
    let environment: [String: String]
    let direct: [String: String]
    let pause: URL
    let account: String
    let journal: String

    static func start(runtime: String) async throws -> World {
      try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
      let server = try await AuthServer.asShippedLongLived
      let session = try await PrivateSession.started(.unlockedKeyring, ownAgent: false)
      let home = session.directory.appendingPathComponent("home")
      try server.writeType(id: "rotating", displayName: "Rotating", scopes: ["openid", "read"], home: home)
      let pause = session.directory.appendingPathComponent("pause")
      try FileManager.default.createDirectory(at: pause, withIntermediateDirectories: true)
      var environment = session.environment
      environment["XDG_CONFIG_HOME"] = home.appendingPathComponent("config").path
      environment["XDG_RUNTIME_DIR"] = runtime
      environment["TOKENCTL_CONFIG"] = nil
      environment["TOKENCTL_LOG"] = nil
      environment["TOKENCTL_ACCOUNT"] = nil
      environment.merge(server.scriptedBrowser(in: session.directory)) { $1 }
      environment["DISPLAY"] = ":0"
      var direct = environment
      direct["TOKENCTL_AGENT"] = "0"
      let login = try await TestProcess.run(
        TestProcess.tokenctl, ["login", "rotating", "--browser"], environment: direct)
      try #require(login.status == 0, "\(login.stderr)")
      let list = try await TestProcess.run(TestProcess.tokenctl, ["list", "--json"], environment: direct)
      let json = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any]
      let name = try #require((json?["accounts"] as? [[String: Any]])?.first?["name"] as? String, "\(list.stdout)")
      return World(
        server: server, session: session, environment: environment, direct: direct, pause: pause,
        account: "rotating:" + name, journal: runtime + "/tokenctl/journal")
    }

    /// An agent of this world's, without the pause: only the command line's refreshes are held.
    func agent() async throws -> TestAgent {
      return try await TestAgent.start(environment: environment, in: session.directory)
    }

    /// Starts `tokenctl refresh` held at the pause, once the server has answered and
    /// before the keyring is written; returns it and the held process's id.
    func heldRefresh() async throws -> (TestProcess, pid_t) {
      for name in ["paused", "resume"] { try? FileManager.default.removeItem(at: pause.appendingPathComponent(name)) }
      var held = direct
      held[RefreshTestPause.variable] = pause.path
      let refresh = try TestProcess(
        TestProcess.tokenctl, ["refresh", account], environment: held,
        stderr: session.directory.appendingPathComponent("refresh.err").path)
      let text = try await GrantJournalTests.awaitFile(pause.appendingPathComponent("paused").path)
      return (refresh, try #require(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))))
    }

    func resume() {
      _ = FileManager.default.createFile(atPath: pause.appendingPathComponent("resume").path, contents: nil)
    }
  }

  /// Every regular file below `folder`, with its content.
  static func files(below folder: String) -> [String: String] {
    var found: [String: String] = [:]
    guard let walker = FileManager.default.enumerator(atPath: folder) else { return found }
    while let relative = walker.nextObject() as? String {
      let path = folder + "/" + relative
      var info = stat()
      guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
      found[relative] = String(decoding: (FileManager.default.contents(atPath: path) ?? Data()), as: UTF8.self)
    }
    return found
  }

  /// A runtime folder on a disk keeps no journal: at the moment a journal entry would hold
  /// the only valid refresh token, nothing below the folder holds a refresh token. On a
  /// tmpfs, the entry is there, private, and gone once the keyring has the answer.
  @Test(arguments: ["disk", "tmpfs"])
  func aRuntimeFolderOnADiskNeverHoldsARefreshToken(_ filesystem: String) async throws {
    let disk = URL(fileURLWithPath: "/var/tmp").appendingPathComponent("tokenctl-disk-\(UUID().uuidString)").path
    var memory: MemoryFolder?
    if filesystem == "disk" {
      try FileManager.default.createDirectory(
        atPath: disk, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      let type = JournalPlacement.filesystemType(of: disk)
      try #require(
        type.flatMap(JournalPlacement.MemoryFilesystem.init(rawValue:)) == nil, "/var/tmp is in memory here")
    } else {
      memory = try MemoryFolder.canMount ? MemoryFolder(mountingTmpfsOf: 1 << 20) : MemoryFolder()
    }
    defer { try? FileManager.default.removeItem(atPath: disk) }
    let runtime = memory?.path ?? disk
    let world = try await World.start(runtime: runtime)
    defer { world.session.stop() }

    let (refresh, _) = try await world.heldRefresh()
    let held = Self.files(below: runtime)
    world.resume()
    let status = await refresh.exitStatus(within: 120)
    let holding = held.filter { $0.value.contains("refresh_token") }.keys.sorted()
    if filesystem == "disk" {
      #expect(holding.isEmpty, "a refresh token on a disk, in \(holding)")
      #expect(!FileManager.default.fileExists(atPath: world.journal), "a journal folder on a disk")
    } else {
      #expect(holding.count == 1 && holding.allSatisfy { $0.hasPrefix("tokenctl/journal/") }, "\(held.keys.sorted())")
      #expect(((try? FileManager.default.contentsOfDirectory(atPath: world.journal)) ?? ["?"]).isEmpty)
    }
    #expect(
      status == 0,
      "\((try? String(contentsOf: world.session.directory.appendingPathComponent("refresh.err"), encoding: .utf8)) ?? "")"
    )
  }

  /// An entry that exists but cannot be read: the refresh that wrote it was killed after
  /// the server had answered, so the stored refresh token is spent and the access token
  /// beside it revoked. The next `tokenctl token` hands out no token, exits as for an
  /// account that needs a sign-in (5), says why, and sets the entry aside.
  @Test(arguments: damageCases)
  func anUnreadableEntryHandsOutNoDeadToken(_ test: Case) async throws {
    let memory = try MemoryFolder()
    let world = try await World.start(runtime: memory.path)
    defer { world.session.stop() }
    let agent = test.path == .agent ? try await world.agent() : nil
    defer { if let agent { Task { await agent.stop() } } }
    let client = agent?.environment ?? world.direct

    let before = try await TestProcess.run(TestProcess.tokenctl, ["token", world.account], environment: client)
    try #require(before.status == 0, "\(before.stderr)")
    let (refresh, pid) = try await world.heldRefresh()
    kill(pid, SIGKILL)
    world.resume()
    _ = await refresh.exitStatus(within: 120)
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: world.journal)) ?? []
    let name = try #require(entries.first { $0.hasSuffix(".json") }, "no journal entry: \(entries)")
    let entry = world.journal + "/" + name
    let stale = before.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(try await !world.server.introspect(stale).active, "the server did not rotate")

    let bytes = try Data(contentsOf: URL(fileURLWithPath: entry))
    switch test.damage {
    case .truncated: try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: entry))
    case .overwritten: try Data(repeating: 0x78, count: bytes.count).write(to: URL(fileURLWithPath: entry))
    case .emptied: try Data().write(to: URL(fileURLWithPath: entry))
    case .openToOthers: chmod(entry, 0o644)
    case .unknownVersion:
      var object = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
      object["version"] = 99
      try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: entry))
    }

    var dead = 0
    var problems: [String] = []
    let asks = 2
    for ask in 1...asks {
      let answer = try await TestProcess.run(TestProcess.tokenctl, ["token", world.account], environment: client)
      let token = answer.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
      if answer.status == 0, try await !world.server.introspect(token).active { dead += 1 }
      if answer.status != 5 || !token.isEmpty { problems.append("ask \(ask): exit \(answer.status), \(answer.stderr)") }
      if !answer.stderr.contains("needs a new sign-in") || !answer.stderr.contains("tokenctl login") {
        problems.append("ask \(ask) says: \(answer.stderr)")
      }
      if ask == 1, !answer.stderr.contains("cannot be read") { problems.append("no reason given: \(answer.stderr)") }
    }
    let kept = (try? FileManager.default.contentsOfDirectory(atPath: world.journal)) ?? []
    #expect(kept == [String(name.dropLast(".json".count)) + ".unreadable"], "the entry was not set aside: \(kept)")
    HardeningSummary.record("journal", test.path.rawValue, test.damage.rawValue, "\(dead)", "\(asks)")
    #expect(dead == 0, "\(dead) dead tokens handed out")
    #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(agent?.log ?? "")")
  }

  /// A journal whose tmpfs is full: refreshes go on, and each command that refreshed says
  /// once on standard error that the journal cannot be written and what that risks; the
  /// agent says it once in its log, however many refreshes meet it.
  @Test(.enabled(if: MemoryFolder.canMount, "mounting a small tmpfs needs root"), arguments: Path.allCases)
  func aJournalThatCannotBeWrittenIsSaid(_ path: Path) async throws {
    let memory = try MemoryFolder(mountingTmpfsOf: 256 * 1024)
    let world = try await World.start(runtime: memory.path)
    defer { world.session.stop() }
    let agent = path == .agent ? try await world.agent() : nil
    defer { if let agent { Task { await agent.stop() } } }
    let client = agent?.environment ?? world.direct
    memory.fill()

    var problems: [String] = []
    for ask in 1...2 {
      // Longer than the server's hour: each ask refreshes.
      let answer = try await TestProcess.run(
        TestProcess.tokenctl, ["token", "--min-valid", "7200", world.account], environment: client)
      let token = answer.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
      if answer.status != 0 { problems.append("ask \(ask): exit \(answer.status): \(answer.stderr)") }
      if answer.status == 0, try await !world.server.introspect(token).active {
        problems.append("ask \(ask): a dead token")
      }
      let said = answer.stderr.components(separatedBy: GrantJournalFault.lead).count - 1
      if said != 1 { problems.append("ask \(ask) said it \(said) times: \(answer.stderr)") }
      if !answer.stderr.contains("new sign-in") || !answer.stderr.contains("df -h") {
        problems.append("ask \(ask) does not say what it risks or what to do: \(answer.stderr)")
      }
    }
    if let agent {
      let logged = agent.log.components(separatedBy: GrantJournalFault.lead).count - 1
      if logged != 1 { problems.append("the agent logged it \(logged) times: \(agent.log)") }
    }
    HardeningSummary.record("journal-unwritable", path.rawValue, problems.isEmpty ? "pass" : "fail")
    #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
  }

  /// tokenctl-keyring(5) says what the code does: the file systems a journal is kept on,
  /// the name an unreadable entry is set aside under, and the warning's first words.
  @Test func theManualSaysWhatTheCodeDoes() throws {
    let page = try String(contentsOfFile: AuthServer.path("man/tokenctl-keyring.5"), encoding: .utf8)
    let text = page.split(separator: "\n").joined(separator: " ")
    let names = JournalPlacement.MemoryFilesystem.allCases.map { "a \($0.name)" }
    #expect(text.contains("is " + names.joined(separator: " or ")), "\(names)")
    let scratch = try TemporaryDirectory()
    let journal = FileGrantJournal(directory: scratch.path("run/journal"), root: scratch.path("run"))
    let key = AccountKey(type: "corp", id: "ada")
    try journal.write(
      JournaledGrant(
        key: key, group: "default", tokens: TokenSet(accessToken: "AT", refreshToken: "RT"), grantedScopes: nil,
        updatedAt: Date(), replaces: ""))
    let kept = try #require(journal.setAside(key, group: "default"))
    let suffix = String(kept[try #require(kept.lastIndex(of: "."))...])
    #expect(page.contains(".Ar HASH Ns Pa \(suffix)\n"), "\(suffix)")
    #expect(text.contains(".Dq \(GrantJournalFault.lead) ,"))
  }
}
