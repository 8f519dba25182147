import Foundation
import NativeAppSupport
import TestSupport
import Testing
import TokenKit

/// The files layer: the owner-and-mode table (``FilePolicy``), the one reader, the one
/// atomic writer, the one lock file and the one hashed name.
@Suite struct FilesLayerTests {
  /// A file of the user's with `mode`, holding `bytes`.
  static func file(
    _ scratch: TemporaryDirectory, _ name: String = "file", mode: mode_t, bytes: Int = 1
  ) throws -> String {
    let path = scratch.path(name)
    #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x41, count: bytes)))
    try #require(chmod(path, mode) == 0)
    return path
  }

  @Test(arguments: [
    (FilePolicy.privateFile, 0o600, true), (.privateFile, 0o400, true), (.privateFile, 0o640, false),
    (.privateFile, 0o604, false), (.privateFile, 0o620, false), (.privateFile, 0o610, false),
    (.settings, 0o644, true), (.settings, 0o600, true), (.settings, 0o664, false), (.settings, 0o646, false),
    (.secretSettings, 0o600, true), (.secretSettings, 0o640, false), (.secretSettings, 0o604, false),
  ])
  func eachLevelRefusesTheModesItForbids(policy: FilePolicy, mode: Int, allowed: Bool) throws {
    let scratch = try TemporaryDirectory()
    let path = try Self.file(scratch, mode: mode_t(mode))
    let read = Result { () throws(FileProblem) in try PrivateFile.read(path, limit: 16, policy: policy)?.bytes }
    #expect(read == (allowed ? .success([0x41]) : .failure(.openToOthers(mode: mode_t(mode)))))
  }

  @Test func onlyTheSettingsLevelsTrustRoot() {
    #expect(FilePolicy.settings.allowsOwner(0) && FilePolicy.secretSettings.allowsOwner(0))
    #expect(FilePolicy.privateFile.allowsOwner(0) == (geteuid() == 0))
    #expect(FilePolicy.privateDirectory.allowsOwner(0) == (geteuid() == 0))
    #expect(!FilePolicy.privateFile.allowsOwner(65534) && !FilePolicy.settings.allowsOwner(65534))
  }

  @Test func aPrivateDirectoryIsADirectoryClosedToOthersAndNoLink() throws {
    let scratch = try TemporaryDirectory()
    let directory = scratch.path("d")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    func problem(_ path: String) -> FileProblem? {
      var info = stat()
      return lstat(path, &info) == 0 ? FilePolicy.privateDirectory.problem(info) : .unreadable(errno)
    }
    #expect(chmod(directory, 0o700) == 0)
    #expect(problem(directory) == nil)
    #expect(chmod(directory, 0o750) == 0)
    #expect(problem(directory) == .openToOthers(mode: 0o750))
    try FileManager.default.createSymbolicLink(atPath: scratch.path("link"), withDestinationPath: directory)
    #expect(problem(scratch.path("link")) == .symbolicLink)
    #expect(problem(try Self.file(scratch, mode: 0o600)) == .notADirectory)
  }

  @Test func theReaderFollowsNoLinkUnlessAskedAndNeverBlocksOnAFIFO() throws {
    let scratch = try TemporaryDirectory()
    let path = try Self.file(scratch, mode: 0o600)
    let link = scratch.path("link")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
    #expect(throws: FileProblem.symbolicLink) { try PrivateFile.read(link, limit: 16, policy: .privateFile) }
    #expect(try PrivateFile.read(link, limit: 16, policy: .settings, followingLinks: true)?.bytes == [0x41])
    #expect(mkfifo(scratch.path("fifo"), 0o600) == 0)
    #expect(throws: FileProblem.notARegularFile) {
      try PrivateFile.read(scratch.path("fifo"), limit: 16, policy: nil, followingLinks: true)
    }
    #expect(try PrivateFile.read(scratch.path("missing"), limit: 16, policy: .privateFile) == nil)
  }

  @Test func aLargerFileIsRefusedOrCutOneByteAfterTheLimit() throws {
    let scratch = try TemporaryDirectory()
    let path = try Self.file(scratch, mode: 0o600, bytes: 40_000)
    #expect(throws: FileProblem.tooLarge) { try PrivateFile.read(path, limit: 39_999, policy: .privateFile) }
    #expect(try PrivateFile.read(path, limit: 40_000, policy: .privateFile)?.bytes.count == 40_000)
    let cut = try PrivateFile.read(path, limit: 30_000, policy: .privateFile, truncating: true)
    #expect(cut?.bytes.count == 30_001)
  }

  @Test(arguments: [true, false])
  func theWriterReplacesAFileWholePrivateAndLeavesNothingBehind(durable: Bool) throws {
    let scratch = try TemporaryDirectory()
    let path = try Self.file(scratch, mode: 0o644, bytes: 3)
    try AtomicFile.write(Array("new".utf8), to: path, durable: durable)
    #expect(try PrivateFile.read(path, limit: 16, policy: .privateFile)?.bytes == Array("new".utf8))
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted() == ["file"])
    // A link in its place is replaced, not written through.
    let target = try Self.file(scratch, "target", mode: 0o600)
    try FileManager.default.removeItem(atPath: path)
    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    try AtomicFile.write(Array("again".utf8), to: path, durable: durable)
    #expect(try PrivateFile.read(target, limit: 16, policy: .privateFile)?.bytes == [0x41])
    #expect(try PrivateFile.read(path, limit: 16, policy: .privateFile)?.bytes == Array("again".utf8))
  }

  @Test func aLockHeldThroughAnotherDescriptionIsNotTakenWithoutWaiting() throws {
    let scratch = try TemporaryDirectory()
    let path = scratch.path("x.lock")
    #expect(!LockFile.isHeld(path))
    #expect(!FileManager.default.fileExists(atPath: path), "looking made no file")
    let first = try LockFile.open(path), second = try LockFile.open(path)
    defer { close(second) }
    #expect(try LockFile.lock(first, path: path, waiting: .no))
    #expect(LockFile.isHeld(path) && LockFile.holds(first, path: path))
    #expect(try !LockFile.lock(second, path: path, waiting: .no))
    #expect(!LockFile.holds(second, path: path))
    close(first)
    #expect(!LockFile.isHeld(path))
    #expect(try LockFile.lock(second, path: path, waiting: .untilFree))
    var info = stat()
    #expect(lstat(path, &info) == 0 && info.st_mode & 0o7777 == 0o600)
  }

  @Test func aPolledLockGivesUpAtItsDeadline() async throws {
    let scratch = try TemporaryDirectory()
    let path = scratch.path("x.lock")
    let holder = try LockFile.open(path), waiter = try LockFile.open(path)
    defer { close(holder); close(waiter) }
    #expect(try LockFile.lock(holder, path: path, waiting: .no))
    let deadline = ContinuousClock.now.advanced(by: .milliseconds(30))
    #expect(try await !LockFile.lock(waiter, path: path, until: deadline, every: .milliseconds(5)))
  }

  /// The names of lock files, journal entries and cached documents outlive a version of
  /// tokenctl: they must not change.
  @Test func hashedNamesAreStable() {
    #expect(HashedName.of("default", "corp", "user-42") == "6d3dcac31c817c3b87adeed60c85ccce")
    #expect(HashedName.of("https://id.example/realms/corp") == "a76008f3afb31a91c91f0af145229eff")
    #expect(HashedName.of("ab", "c") != HashedName.of("a", "bc"))
    #expect(
      FileAccountLocks(directory: "/l").path(for: AccountKey(type: "corp", id: "user-42"), group: "default")
        == "/l/6d3dcac31c817c3b87adeed60c85ccce.lock")
  }
}

/// tokenctl's grant journal reads only entries that are private files of the user's, as
/// every other file it keeps (``FilePolicy/privateFile``).
@Suite struct FileGrantJournalFileTests {
  static let grant = JournaledGrant(
    key: AccountKey(type: "corp", id: "user-42"), group: "default",
    tokens: TokenSet(accessToken: "access", refreshToken: "refresh"), grantedScopes: nil,
    updatedAt: Date(timeIntervalSince1970: 1_700_000_000), replaces: "old")

  @Test func anEntryIsPrivateAndOneOthersCouldReadOrChangeIsNotRead() throws {
    let scratch = try TemporaryDirectory()
    let journal = FileGrantJournal(directory: scratch.path("run/journal"), root: scratch.path("run"))
    try journal.write(Self.grant)
    let path = journal.path(for: Self.grant.key, group: "default")
    var info = stat()
    #expect(lstat(path, &info) == 0 && info.st_mode & 0o7777 == 0o600)
    #expect(journal.read(Self.grant.key, group: "default") == Self.grant)
    for mode: mode_t in [0o640, 0o604, 0o660] {
      #expect(chmod(path, mode) == 0)
      #expect(journal.read(Self.grant.key, group: "default") == nil, "mode \(String(mode, radix: 8))")
    }
  }
}
