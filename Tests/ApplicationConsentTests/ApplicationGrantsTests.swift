import ApplicationConsent
import Foundation
import NativeAppSupport
import Synchronization
import TestSupport
import Testing
import TokenKit

/// The grants file against a real directory: what is allowed, what survives a restart,
/// which files are not trusted, and writers that race.
@Suite struct ApplicationGrantsTests {
  static let python = "/usr/bin/python3.11"
  static let day = Date(timeIntervalSince1970: 1_800_000_000)
  static let ada = GrantedAccount(key: AccountKey(type: "github", id: "1001"), name: "github:ada")
  static let grace = GrantedAccount(key: AccountKey(type: "gitlab", id: "77"), name: "gitlab:grace")
  static let linus = GrantedAccount(key: AccountKey(type: "github", id: "1002"), name: "github:linus")

  let home: TemporaryDirectory
  let directories: XDGDirectories
  let warnings = Warnings()

  init() throws {
    home = try TemporaryDirectory()
    directories = XDGDirectories(environment: ["HOME": home.url.path, "XDG_STATE_HOME": home.path("state")])
  }

  final class Warnings: Sendable {
    private let messages = Mutex<[String]>([])
    func add(_ message: String) { messages.withLock { $0.append(message) } }
    var all: [String] { messages.withLock { $0 } }
  }

  func grants() -> ApplicationGrants {
    ApplicationGrants(directories: directories, warn: { [warnings] in warnings.add($0) })
  }

  var file: String { directories.state + "/grants.json" }

  @Test func aGrantSurvivesInAFreshInstanceAndDecidesPerAccountAndGroup() throws {
    try grants().allow(application: Self.python, group: "default", accounts: [Self.ada], at: Self.day)
    let reread = grants()
    #expect(reread.decision(application: Self.python, group: "default", account: Self.ada.key) == .allowed)
    #expect(reread.decision(application: Self.python, group: "default", account: Self.linus.key) == .undecided)
    #expect(reread.decision(application: Self.python, group: "work", account: Self.ada.key) == .undecided)
    #expect(reread.decision(application: "/usr/bin/perl", group: "default", account: Self.ada.key) == .undecided)
    #expect(reread.visibleAccounts(application: Self.python, group: "default") == .accounts([Self.ada.key]))
    #expect(reread.visibleAccounts(application: Self.python, group: "work") == nil)
    #expect(
      try reread.entries() == [
        Grant(application: Self.python, group: "default", state: .allowed([Self.ada]), since: Self.day)
      ])
    let text = try String(contentsOfFile: file, encoding: .utf8)
    #expect(text.contains(#""version" : 1"#) && text.contains(#""id" : "1001""#))
    #expect(warnings.all.isEmpty)
  }

  /// A Flatpak app is granted by its app id, and another app id is another application.
  @Test func aFlatpakAppIsGrantedByItsAppID() throws {
    try grants().allow(application: "flatpak:org.example.A", group: "default", accounts: [Self.ada], at: Self.day)
    let fresh = grants()
    #expect(fresh.decision(application: "flatpak:org.example.A", group: "default", account: Self.ada.key) == .allowed)
    #expect(fresh.decision(application: "flatpak:org.example.B", group: "default", account: Self.ada.key) == .undecided)
    #expect(try fresh.entries().map(\.application) == ["flatpak:org.example.A"])
    #expect(try String(contentsOfFile: file, encoding: .utf8).contains(#""application" : "flatpak:org.example.A""#))
    #expect(warnings.all.isEmpty)
  }

  @Test func accountsMergeAndAllReplaces() throws {
    let grants = grants()
    try grants.allow(application: Self.python, group: "default", accounts: [Self.ada], at: Self.day)
    try grants.allow(application: Self.python, group: "default", accounts: [Self.grace], at: Self.day)
    #expect(
      grants.visibleAccounts(application: Self.python, group: "default") == .accounts([Self.ada.key, Self.grace.key]))
    try grants.allow(application: Self.python, group: "default", accounts: nil, at: Self.day)
    #expect(grants.visibleAccounts(application: Self.python, group: "default") == .all)
    #expect(grants.decision(application: Self.python, group: "default", account: Self.linus.key) == .allowed)
    // A grant of every account is not narrowed by naming one.
    try grants.allow(application: Self.python, group: "default", accounts: [Self.ada], at: Self.day)
    #expect(grants.visibleAccounts(application: Self.python, group: "default") == .all)
    #expect(try grants.entries().count == 1)
  }

  @Test func aDenialIsRememberedAndALaterGrantReplacesIt() throws {
    let grants = grants()
    try grants.allow(application: Self.python, group: "default", accounts: [Self.ada], at: Self.day)
    try grants.allow(application: Self.python, group: "work", accounts: nil, at: Self.day)
    try grants.deny(application: Self.python, group: "default", at: Self.day)
    #expect(grants.decision(application: Self.python, group: "default", account: Self.ada.key) == .denied)
    #expect(grants.visibleAccounts(application: Self.python, group: "default") == nil)
    #expect(grants.decision(application: Self.python, group: "work", account: Self.ada.key) == .allowed)

    // Without a group: every grant goes, and every group is denied.
    try grants.deny(application: Self.python, group: nil, at: Self.day)
    #expect(grants.decision(application: Self.python, group: "work", account: Self.ada.key) == .denied)
    #expect(grants.decision(application: Self.python, group: "elsewhere", account: Self.ada.key) == .denied)
    #expect(try grants.entries() == [Grant(application: Self.python, group: nil, state: .denied, since: Self.day)])

    let later = Self.day.addingTimeInterval(3600)
    try grants.allow(application: Self.python, group: "work", accounts: [Self.grace], at: later)
    #expect(grants.decision(application: Self.python, group: "work", account: Self.grace.key) == .allowed)
    #expect(grants.decision(application: Self.python, group: "default", account: Self.grace.key) == .denied)
  }

  /// The agent's instance keeps what it read, and sees a change another process made.
  @Test func aReaderSeesAnotherWritersChange() throws {
    let agent = grants(), command = grants()
    try command.allow(application: Self.python, group: "default", accounts: nil, at: Self.day)
    #expect(agent.decision(application: Self.python, group: "default", account: Self.ada.key) == .allowed)
    try command.deny(application: Self.python, group: "default", at: Self.day)
    #expect(agent.decision(application: Self.python, group: "default", account: Self.ada.key) == .denied)
    try FileManager.default.removeItem(atPath: file)
    #expect(agent.decision(application: Self.python, group: "default", account: Self.ada.key) == .undecided)
    #expect(warnings.all.isEmpty)
  }

  @Test func theFileIsPrivateInAPrivateDirectory() throws {
    try grants().allow(application: Self.python, group: "default", accounts: nil, at: Self.day)
    #expect(try mode(of: file) == 0o600)
    #expect(try mode(of: directories.state) == 0o700)
    #expect(try mode(of: directories.state + "/grants.lock") & 0o077 == 0)
  }

  @Test func aGroupWritableFileIsIgnoredWithOneWarning() throws {
    let grants = grants()
    try grants.allow(application: Self.python, group: "default", accounts: nil, at: Self.day)
    #expect(grants.decision(application: Self.python, group: "default", account: Self.ada.key) == .allowed)
    #expect(chmod(file, 0o620) == 0)
    for _ in 0..<3 {
      #expect(grants.decision(application: Self.python, group: "default", account: Self.ada.key) == .undecided)
    }
    #expect(warnings.all.count == 1)
    #expect(warnings.all.first?.contains("other users may change it (mode 620)") == true, "\(warnings.all)")
    #expect(throws: TokenKitError.self) { try grants.entries() }
    // Nor is it overwritten: what else it holds is the user's to check.
    #expect(throws: TokenKitError.self) {
      try grants.allow(application: "/usr/bin/perl", group: "default", accounts: nil, at: Self.day)
    }
    #expect(chmod(file, 0o600) == 0)
    #expect(grants.decision(application: Self.python, group: "default", account: Self.ada.key) == .allowed)
  }

  @Test func aFileOfAnotherUserIsIgnored() throws {
    try #require(geteuid() == 0, "chown needs root")
    let grants = grants()
    try grants.allow(application: Self.python, group: "default", accounts: nil, at: Self.day)
    #expect(chown(file, 65534, 65534) == 0)
    #expect(grants.decision(application: Self.python, group: "default", account: Self.ada.key) == .undecided)
    #expect(grants.visibleAccounts(application: Self.python, group: "default") == nil)
    #expect(warnings.all.count == 1 && warnings.all[0].contains("belongs to another user"), "\(warnings.all)")
  }

  /// The grants file is private as the audit log beside it is (FilePolicy.privateFile):
  /// one others may read is ignored too, and so is a directory others may enter, which
  /// every change refused anyway (XDGDirectories.ensurePrivateDirectory).
  @Test(arguments: [(0o640, 0o700), (0o604, 0o700), (0o600, 0o750), (0o600, 0o705)])
  func aFileOrDirectoryOthersMayReadIsIgnored(fileMode: Int, directoryMode: Int) throws {
    let grants = grants()
    try grants.allow(application: Self.python, group: "default", accounts: nil, at: Self.day)
    #expect(chmod(file, mode_t(fileMode)) == 0 && chmod(directories.state, mode_t(directoryMode)) == 0)
    #expect(grants.decision(application: Self.python, group: "default", account: Self.ada.key) == .undecided)
    let expected =
      fileMode == 0o600 ? "not a private directory" : "other users may read it (mode \(String(fileMode, radix: 8)))"
    #expect(warnings.all.count == 1 && warnings.all[0].contains(expected), "\(warnings.all)")
    #expect(throws: TokenKitError.self) {
      try grants.allow(application: "/usr/bin/perl", group: "default", accounts: nil, at: Self.day)
    }
  }

  @Test func aGroupWritableDirectoryIsIgnored() throws {
    let grants = grants()
    try grants.allow(application: Self.python, group: "default", accounts: nil, at: Self.day)
    #expect(chmod(directories.state, 0o770) == 0)
    #expect(grants.decision(application: Self.python, group: "default", account: Self.ada.key) == .undecided)
    #expect(warnings.all.count == 1 && warnings.all[0].contains("not a private directory"), "\(warnings.all)")
  }

  @Test(arguments: [
    "not json", #"{"version": 2, "grants": []}"#, #"{"version": 1}"#,
    #"{"version": 1, "grants": [{"application": "python3", "group": "default", "state": "allowed", "since": "2026-11-24T04:05:06Z"}]}"#,
    #"{"version": 1, "grants": [{"application": "/usr/bin/x", "group": "default", "state": "maybe", "since": "2026-11-24T04:05:06Z"}]}"#,
    #"{"version": 1, "grants": [{"application": "flatpak:org.example", "group": "default", "state": "allowed", "since": "2026-11-24T04:05:06Z"}]}"#,
  ])
  func aMalformedFileIsIgnoredAndNotOverwritten(text: String) throws {
    try XDGDirectories.ensurePrivateDirectory(directories.state)
    try text.write(toFile: file, atomically: false, encoding: .utf8)
    #expect(chmod(file, 0o600) == 0)
    let grants = grants()
    #expect(grants.decision(application: "/usr/bin/x", group: "default", account: Self.ada.key) == .undecided)
    #expect(warnings.all.count == 1 && warnings.all[0].hasPrefix("ignoring \(file): "), "\(warnings.all)")
    let error = #expect(throws: TokenKitError.self) {
      try grants.allow(application: Self.python, group: "default", accounts: nil, at: Self.day)
    }
    #expect(error?.message.hasPrefix("will not change \(file)") == true, "\(String(describing: error))")
    #expect(error?.recovery?.contains("Fix the file or delete it") == true)
    #expect(try String(contentsOfFile: file, encoding: .utf8) == text)
    #expect(warnings.all.count == 1)
  }

  @Test func eightThreadsOfWritersLoseNoGrant() async throws {
    let applications = (0..<8).map { "/opt/app\($0)" }
    try await withThrowingTaskGroup(of: Void.self) { tasks in
      for application in applications {
        // A detached thread each, so that the flock waits really overlap.
        tasks.addTask {
          try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
              // Each thread its own instance, as separate processes would have.
              let grants = ApplicationGrants(directories: directories, warn: { _ in })
              do {
                for round in 0..<10 {
                  try grants.allow(application: application, group: "g\(round)", accounts: nil, at: Self.day)
                }
                done.resume()
              } catch { done.resume(throwing: error) }
            }
            thread.start()
          }
        }
      }
      try await tasks.waitForAll()
    }
    let entries = try grants().entries()
    #expect(entries.count == 80)
    for application in applications {
      #expect(grants().decision(application: application, group: "g9", account: Self.ada.key) == .allowed)
    }
  }

  @Test func useIsWrittenAtMostOnceAMinute() throws {
    let grants = grants()
    try grants.allow(application: Self.python, group: "default", accounts: nil, at: Self.day)
    func written() throws -> Date? { try ApplicationGrantsTests.grants(at: file, directories).first?.lastUse }
    let first = Self.day.addingTimeInterval(100)
    grants.noteUse(application: Self.python, group: "default", at: first)
    #expect(try written() == first)
    let inode = try inodeOf(file)
    grants.noteUse(application: Self.python, group: "default", at: first.addingTimeInterval(30))
    grants.noteUse(application: Self.python, group: "default", at: first.addingTimeInterval(59))
    // Not written at all: the same file, and the first use.
    #expect(try inodeOf(file) == inode)
    #expect(try written() == first)
    grants.noteUse(application: Self.python, group: "default", at: first.addingTimeInterval(61))
    #expect(try written() == first.addingTimeInterval(61))
    // An application without a grant leaves no trace.
    grants.noteUse(application: "/usr/bin/perl", group: "default", at: first)
    #expect(try grants.entries().count == 1)
    #expect(warnings.all.isEmpty)
  }

  @Test func aGrantKeepsItsLastUseAndADenialDropsIt() throws {
    let grants = grants()
    try grants.allow(application: Self.python, group: "default", accounts: [Self.ada], at: Self.day)
    let use = Self.day.addingTimeInterval(10)
    grants.noteUse(application: Self.python, group: "default", at: use)
    try grants.allow(application: Self.python, group: "default", accounts: [Self.grace], at: Self.day)
    #expect(try grants.entries().first?.lastUse == use)
    try grants.deny(application: Self.python, group: "default", at: Self.day)
    #expect(try grants.entries().first?.lastUse == nil)
  }

  static func grants(at file: String, _ directories: XDGDirectories) throws -> [Grant] {
    try ApplicationGrants(directories: directories, warn: { _ in }).entries()
  }

  func mode(of path: String) throws -> mode_t {
    var info = stat()
    guard lstat(path, &info) == 0 else { throw TestFailure("no \(path)") }
    return info.st_mode & 0o7777
  }

  func inodeOf(_ path: String) throws -> ino_t {
    var info = stat()
    guard lstat(path, &info) == 0 else { throw TestFailure("no \(path)") }
    return info.st_ino
  }
}
