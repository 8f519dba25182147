import Foundation
import NativeAppSupport
import Synchronization
import TestSupport
import Testing
import TokenKit

/// The permission bits of `path`, or nil when it does not exist.
private func mode(_ path: String) -> Int? {
  (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? nil
}

@Suite(.timeLimit(.minutes(1))) struct FileAccountLocksTests {
  static let key = AccountKey(type: "corp", id: "user-42")

  @Test func aSecondAcquisitionWaitsForTheFirstRelease() async throws {
    let scratch = try TemporaryDirectory()
    let locks = FileAccountLocks(directory: scratch.path("locks"))
    let first = try await locks.acquire(Self.key, group: "default", timeout: .seconds(1))
    let acquired = Mutex(false)
    let second = Task {
      let handle = try await locks.acquire(Self.key, group: "default", timeout: .seconds(10))
      acquired.withLock { $0 = true }
      return handle
    }
    // Several poll intervals pass without the second getting in.
    try await Task.sleep(for: .milliseconds(40))
    #expect(!acquired.withLock { $0 })
    first.release()
    let handle = try await second.value
    #expect(acquired.withLock { $0 })
    handle.release()
  }

  /// The capability a refresh child needs, offered through the protocol (no downcast):
  /// a file lock's descriptor while it is held, which the lock file's check accepts.
  /// What the one rule for handing out a stored token asks: is a refresh in flight? A
  /// lock held by this very process counts; a lock file nobody made is held by nobody.
  @Test func aHeldLockIsSeenWithoutWaitingOrMakingAFile() async throws {
    let scratch = try TemporaryDirectory()
    let locks = FileAccountLocks(directory: scratch.path("locks"))
    let key = AccountKey(type: "corp", id: "ada")
    #expect(!locks.isHeld(key, group: "default"))
    #expect(!FileManager.default.fileExists(atPath: locks.path(for: key, group: "default")))
    let handle = try await locks.acquire(key, group: "default", timeout: .seconds(1))
    #expect(locks.isHeld(key, group: "default"))
    #expect(!locks.isHeld(AccountKey(type: "corp", id: "grace"), group: "default"))
    handle.release()
    #expect(!locks.isHeld(key, group: "default"))
  }

  @Test func aFileLockOffersItsDescriptorToHandOnWhileHeld() async throws {
    let scratch = try TemporaryDirectory()
    let locks = FileAccountLocks(directory: scratch.path("locks"))
    let handle: any AccountLockHandle = try await locks.acquire(Self.key, group: "default", timeout: .seconds(1))
    let descriptor = try #require(handle.inheritableDescriptor)
    #expect(locks.holds(descriptor, for: Self.key, group: "default"))
    handle.release()
    #expect(handle.inheritableDescriptor == nil)
  }

  /// What a refresh child checks of the descriptor it was handed: the account's own lock
  /// file, locked by the very description it holds.
  @Test func holdsOnlyTheAccountsOwnLockFileWhenItIsNotHeldElsewhere() async throws {
    let scratch = try TemporaryDirectory()
    let locks = FileAccountLocks(directory: scratch.path("locks"))
    let held = try await locks.acquire(Self.key, group: "default", timeout: .seconds(1))
    defer { held.release() }
    let path = locks.path(for: Self.key, group: "default")
    // Another description of the same file: the lock is someone else's.
    let other = open(path, O_RDWR | O_CLOEXEC)
    defer { close(other) }
    #expect(!locks.holds(other, for: Self.key, group: "default"))
    // Another account's file, or no descriptor at all.
    let elsewhere = open(scratch.path("elsewhere"), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    defer { close(elsewhere) }
    #expect(!locks.holds(elsewhere, for: Self.key, group: "default"))
    #expect(!locks.holds(-1, for: Self.key, group: "default"))
    #expect(!locks.holds(other, for: AccountKey(type: "corp", id: "user-43"), group: "default"))
    // Once released, a description of the right file may take the lock: then it holds it.
    held.release()
    #expect(locks.holds(other, for: Self.key, group: "default"))
  }

  @Test func aSecondAcquisitionTimesOutWithAClearError() async throws {
    let scratch = try TemporaryDirectory()
    let locks = FileAccountLocks(directory: scratch.path("locks"))
    let first = try await locks.acquire(Self.key, group: "default", timeout: .seconds(1))
    defer { first.release() }
    let started = ContinuousClock.now
    let error = await #expect(throws: TokenKitError.self) {
      try await locks.acquire(Self.key, group: "default", timeout: .milliseconds(30))
    }
    #expect(ContinuousClock.now - started >= .milliseconds(30))
    #expect(error?.code == .internalFailure)
    #expect(error?.message.contains("another tokenctl has been refreshing corp:user-42") == true)
    #expect(error?.recovery?.contains("hung tokenctl process") == true)
  }

  @Test func differentAccountsAndGroupsDoNotExclude() async throws {
    let scratch = try TemporaryDirectory()
    let locks = FileAccountLocks(directory: scratch.path("locks"))
    let held = try await locks.acquire(Self.key, group: "default", timeout: .seconds(1))
    defer { held.release() }
    let other = try await locks.acquire(AccountKey(type: "corp", id: "user-43"), group: "default", timeout: .zero)
    let otherType = try await locks.acquire(AccountKey(type: "graph", id: "user-42"), group: "default", timeout: .zero)
    let otherGroup = try await locks.acquire(Self.key, group: "work", timeout: .zero)
    for handle in [other, otherType, otherGroup] { handle.release() }
    let files = try FileManager.default.contentsOfDirectory(atPath: scratch.path("locks"))
    #expect(files.count == 4)
  }

  @Test func releasingTwiceOrDroppingTheHandleReleases() async throws {
    let scratch = try TemporaryDirectory()
    let locks = FileAccountLocks(directory: scratch.path("locks"))
    let handle = try await locks.acquire(Self.key, group: "default", timeout: .seconds(1))
    handle.release()
    handle.release()
    let again = try await locks.acquire(Self.key, group: "default", timeout: .zero)
    again.release()
    do {
      _ = try await locks.acquire(Self.key, group: "default", timeout: .zero)
    }
    // The dropped handle closed its descriptor.
    let last = try await locks.acquire(Self.key, group: "default", timeout: .milliseconds(100))
    last.release()
  }

  @Test func lockFilesArePrivateAndNameNoOne() async throws {
    let scratch = try TemporaryDirectory()
    let directory = scratch.path("run/tokenctl")
    let locks = FileAccountLocks(directory: directory)
    let handle = try await locks.acquire(Self.key, group: "default", timeout: .seconds(1))
    defer { handle.release() }
    #expect(mode(directory) == 0o700)
    #expect(mode(scratch.path("run")) == 0o700)
    let files = try FileManager.default.contentsOfDirectory(atPath: directory)
    let name = try #require(files.first)
    #expect(files.count == 1)
    #expect(mode("\(directory)/\(name)") == 0o600)
    #expect(name.hasSuffix(".lock"))
    #expect(name.dropLast(5).count == 32)
    #expect(name.dropLast(5).allSatisfy { $0.isHexDigit && !$0.isUppercase })
    #expect(!name.contains("user-42") && !name.contains("corp"))
  }

  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock")))
  func theLockExcludesOtherProcesses() async throws {
    let scratch = try TemporaryDirectory()
    let directory = scratch.path("locks")
    let locks = FileAccountLocks(directory: directory)
    let handle = try await locks.acquire(Self.key, group: "default", timeout: .seconds(1))
    let name = try #require(try FileManager.default.contentsOfDirectory(atPath: directory).first)
    let path = "\(directory)/\(name)"
    #expect(try await TestProcess("/usr/bin/flock", ["-n", path, "true"]).exitStatus() == 1)
    handle.release()
    #expect(try await TestProcess("/usr/bin/flock", ["-n", path, "true"]).exitStatus() == 0)
  }

  @Test func manyWaitersTakeTurns() async throws {
    let scratch = try TemporaryDirectory()
    let locks = FileAccountLocks(directory: scratch.path("locks"))
    final class Occupancy: Sendable {
      let inside = Mutex(0)
      let most = Mutex(0)
    }
    let occupancy = Occupancy()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<16 {
        group.addTask {
          // What is tested is that they take turns, not how fast: on CI's loaded machine the
          // sixteen turns once took more than 20 s (each holder's wake-up waits for a thread).
          let handle = try await locks.acquire(Self.key, group: "default", timeout: .seconds(300))
          let now = occupancy.inside.withLock { count in
            count += 1
            return count
          }
          occupancy.most.withLock { $0 = max($0, now) }
          try await Task.sleep(for: .milliseconds(1))
          occupancy.inside.withLock { $0 -= 1 }
          handle.release()
        }
      }
      try await group.waitForAll()
    }
    #expect(occupancy.most.withLock { $0 } == 1)
  }

  @Test func aDirectoryThatIsAFileIsRefused() async throws {
    let scratch = try TemporaryDirectory()
    let path = scratch.path("not-a-directory")
    #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
    let error = await #expect(throws: TokenKitError.self) {
      try await FileAccountLocks(directory: path).acquire(Self.key, group: "default", timeout: .zero)
    }
    #expect(error?.code == .unusableFile)
  }

  /// A lock directory that is a symlink would put the locks wherever it points,
  /// in a directory someone else may control.
  @Test func aLockDirectoryThatIsASymlinkIsRefused() async throws {
    let scratch = try TemporaryDirectory()
    try FileManager.default.createDirectory(atPath: scratch.path("elsewhere"), withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path("locks"), withDestinationPath: scratch.path("elsewhere"))
    let error = await #expect(throws: TokenKitError.self) {
      try await FileAccountLocks(directory: scratch.path("locks")).acquire(Self.key, group: "default", timeout: .zero)
    }
    #expect(error?.code == .unusableFile)
    #expect(error?.message.hasPrefix("\(scratch.path("locks")) is a symbolic link") == true, "\(error?.message ?? "")")
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("elsewhere")).isEmpty)
  }

  @Test func aRelativeDirectoryIsCreatedWhereItSays() async throws {
    let scratch = try TemporaryDirectory()
    // From any working directory, enough "../" reach the root.
    let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
    let relative = String(repeating: "../", count: depth) + String(scratch.path("rel/locks").dropFirst())
    let handle = try await FileAccountLocks(directory: relative).acquire(Self.key, group: "default", timeout: .zero)
    handle.release()
    #expect(mode(scratch.path("rel/locks")) == 0o700)
  }

  /// The refresher under real file locks: one refresh for many concurrent callers.
  @Test func concurrentRefreshesUnderFileLocksSendOneRequest() async throws {
    let scratch = try TemporaryDirectory()
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let store = LockTestStore()
    let account = Account(
      type: "corp", id: "user-42", name: "ada", group: "default", createdAt: now, updatedAt: now,
      clientID: "app")
    try store.save(
      account, tokens: TokenSet(accessToken: "AT-1", refreshToken: "RT-1", expiresAt: now.addingTimeInterval(-5)))
    var registry = AccountTypeRegistry()
    let token = URL(string: "http://127.0.0.1:9/token")!
    try registry.register(
      EndpointDescriptor(
        id: "corp", displayName: "Corp", endpoints: .fixed(Endpoints(authorization: nil, token: token)),
        clientID: "app"),
      source: "test")
    let transport = SlowTokenEndpoint()
    let clock = FixedClock(now)
    let refresher = TokenRefresher(
      registry: registry, store: store, transport: transport, clock: clock,
      locks: FileAccountLocks(directory: scratch.path("locks")),
      discovery: MetadataDiscovery(transport: transport, cache: nil, clock: clock), events: AccountEventCenter())
    let tokens = try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<16 { group.addTask { try await refresher.freshTokens(for: account.key).tokens.accessToken } }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(tokens == Array(repeating: "AT-2", count: 16))
    #expect(transport.count == 1)
    #expect(try store.load(account.key)?.tokens.refreshToken == "RT-2")
  }
}

/// A one-account-per-key store for the lock tests.
private final class LockTestStore: TokenStore, Sendable {
  let group = "default"
  private let items = Mutex<[AccountKey: StoredAccount]>([:])
  func list(_ query: AccountQuery) throws -> [AccountListing] {
    items.withLock { $0.values.map { AccountListing(account: $0.account, tokens: $0.tokens.summary) } }
  }
  func load(_ key: AccountKey) throws -> StoredAccount? { items.withLock { $0[key] } }
  func save(_ account: Account, tokens: TokenSet) throws {
    items.withLock { $0[account.key] = StoredAccount(account: account, tokens: tokens) }
  }
  func remove(_ key: AccountKey) throws -> Bool { items.withLock { $0.removeValue(forKey: key) != nil } }
}

/// A token endpoint that takes 50 ms to rotate the refresh token.
private final class SlowTokenEndpoint: HTTPTransport, Sendable {
  private let requests = Mutex(0)
  var count: Int { requests.withLock { $0 } }
  func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
    requests.withLock { $0 += 1 }
    try? await Task.sleep(for: .milliseconds(50))
    let body = #"{"access_token":"AT-2","token_type":"Bearer","refresh_token":"RT-2","expires_in":3600}"#
    return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "application/json")], body: Array(body.utf8))
  }
}

@Suite struct FileDiscoveryCacheTests {
  static let issuer = "https://id.example/realms/corp"
  static let document = Array(#"{"issuer":"https://id.example/realms/corp"}"#.utf8)

  static func file(in directory: String) throws -> String {
    let files = try FileManager.default.contentsOfDirectory(atPath: directory)
    return "\(directory)/\(try #require(files.first))"
  }

  @Test func roundTripsWithTheModificationTimeAsFetchedAt() throws {
    let scratch = try TemporaryDirectory()
    let directory = scratch.path("cache/discovery")
    let cache = FileDiscoveryCache(directory: directory)
    #expect(cache.load(issuer: Self.issuer) == nil)
    cache.store(issuer: Self.issuer, document: Self.document, fetchedAt: Date(timeIntervalSince1970: 1_700_000_000.75))
    let loaded = try #require(cache.load(issuer: Self.issuer))
    #expect(loaded.document == Self.document)
    // Whole seconds: the file's mtime is the record.
    #expect(loaded.fetchedAt == Date(timeIntervalSince1970: 1_700_000_000))
    let path = try Self.file(in: directory)
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 1)
    #expect(mode(path) == 0o600)
    #expect(mode(directory) == 0o700)
    #expect(!path.contains("id.example"))

    try FileManager.default.setAttributes(
      [.modificationDate: Date(timeIntervalSince1970: 1_600_000_000)], ofItemAtPath: path)
    #expect(cache.load(issuer: Self.issuer)?.fetchedAt == Date(timeIntervalSince1970: 1_600_000_000))
  }

  @Test func storingAgainReplacesAndIssuersAreKeptApart() throws {
    let scratch = try TemporaryDirectory()
    let cache = FileDiscoveryCache(directory: scratch.path("d"))
    let other = Array(#"{"issuer":"https://other.example"}"#.utf8)
    cache.store(issuer: Self.issuer, document: Array("old".utf8), fetchedAt: Date(timeIntervalSince1970: 1))
    cache.store(issuer: Self.issuer, document: Self.document, fetchedAt: Date(timeIntervalSince1970: 2))
    cache.store(issuer: "https://other.example", document: other, fetchedAt: Date(timeIntervalSince1970: 3))
    #expect(cache.load(issuer: Self.issuer)?.document == Self.document)
    #expect(cache.load(issuer: Self.issuer)?.fetchedAt == Date(timeIntervalSince1970: 2))
    #expect(cache.load(issuer: "https://other.example")?.document == other)
    #expect(cache.load(issuer: Self.issuer + "/") == nil)
    // No temporary file is left behind.
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("d")).count == 2)
  }

  @Test func aSymlinkOrAnOversizedFileIsNotRead() throws {
    let scratch = try TemporaryDirectory()
    let directory = scratch.path("d")
    let cache = FileDiscoveryCache(directory: directory)
    cache.store(issuer: Self.issuer, document: Self.document, fetchedAt: Date())
    let path = try Self.file(in: directory)

    let planted = scratch.path("planted.json")
    #expect(FileManager.default.createFile(atPath: planted, contents: Data(Self.document)))
    try FileManager.default.removeItem(atPath: path)
    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: planted)
    #expect(cache.load(issuer: Self.issuer) == nil)

    try FileManager.default.removeItem(atPath: path)
    #expect(
      FileManager.default.createFile(
        atPath: path, contents: Data(repeating: 0x20, count: HTTPTransportLimits.maximumBodySize + 1)))
    #expect(chmod(path, 0o600) == 0, "refused for its size, not its mode")
    #expect(cache.load(issuer: Self.issuer) == nil)
  }

  /// The cache is tokenctl's own, as the grants and the journal are: a document others
  /// could have read or changed is no document of ours (FilePolicy.privateFile).
  @Test func aDocumentOthersCouldReadOrChangeIsNotRead() throws {
    let scratch = try TemporaryDirectory()
    let cache = FileDiscoveryCache(directory: scratch.path("d"))
    cache.store(issuer: Self.issuer, document: Self.document, fetchedAt: Date())
    let path = try Self.file(in: scratch.path("d"))
    #expect(cache.load(issuer: Self.issuer)?.document == Self.document)
    for mode: mode_t in [0o644, 0o620] {
      #expect(chmod(path, mode) == 0)
      #expect(cache.load(issuer: Self.issuer) == nil, "mode \(String(mode, radix: 8))")
    }
    // The next store replaces it with a private file.
    cache.store(issuer: Self.issuer, document: Self.document, fetchedAt: Date())
    #expect(mode(path) == 0o600)
    #expect(cache.load(issuer: Self.issuer)?.document == Self.document)
  }

  @Test func anUnwritableDirectoryIsNotAnError() throws {
    let scratch = try TemporaryDirectory()
    let file = scratch.path("file")
    #expect(FileManager.default.createFile(atPath: file, contents: Data()))
    let cache = FileDiscoveryCache(directory: file + "/d")
    cache.store(issuer: Self.issuer, document: Self.document, fetchedAt: Date())
    #expect(cache.load(issuer: Self.issuer) == nil)
  }
}

@Suite struct LocksAndFilesXDGDirectoriesTests {
  @Test func usesTheXDGVariables() {
    let directories = XDGDirectories(environment: [
      "HOME": "/home/ada", "XDG_CONFIG_HOME": "/cfg", "XDG_CACHE_HOME": "/var/cache/ada",
      "XDG_RUNTIME_DIR": "/run/user/1000", "XDG_STATE_HOME": "/var/state/ada",
    ])
    #expect(directories.config == "/cfg/tokenctl")
    #expect(directories.state == "/var/state/ada/tokenctl")
    #expect(directories.cache == "/var/cache/ada/tokenctl")
    #expect(directories.runtime == "/run/user/1000/tokenctl")
  }

  @Test func fallsBackToHome() {
    let directories = XDGDirectories(environment: ["HOME": "/home/ada"])
    #expect(directories.config == "/home/ada/.config/tokenctl")
    #expect(directories.cache == "/home/ada/.cache/tokenctl")
    #expect(directories.state == "/home/ada/.local/state/tokenctl")
    // Without XDG_RUNTIME_DIR the locks live under the cache.
    #expect(directories.runtime == "/home/ada/.cache/tokenctl/run")
  }

  @Test func ignoresRelativeAndEmptyValues() {
    let directories = XDGDirectories(environment: [
      "HOME": "/home/ada", "XDG_CONFIG_HOME": "cfg", "XDG_CACHE_HOME": "", "XDG_RUNTIME_DIR": "run/user",
      "XDG_STATE_HOME": "state",
    ])
    #expect(directories.state == "/home/ada/.local/state/tokenctl")
    #expect(directories.config == "/home/ada/.config/tokenctl")
    #expect(directories.cache == "/home/ada/.cache/tokenctl")
    #expect(directories.runtime == "/home/ada/.cache/tokenctl/run")
  }

  @Test func withoutHomeUsesThePasswordDatabase() throws {
    let entry = try #require(getpwuid(geteuid()))
    let home = String(cString: try #require(entry.pointee.pw_dir))
    for environment in [[:], ["HOME": ""]] {
      #expect(XDGDirectories(environment: environment).config == home + "/.config/tokenctl")
    }
  }

  /// A private directory group or others may enter or write is refused, not
  /// tightened behind the user's back: a directory they made that way was meant for
  /// something, and what others may have planted in it stays.
  @Test(arguments: [0o755, 0o750, 0o711, 0o701, 0o770, 0o777])
  func aPrivateDirectoryOthersMayEnterIsRefused(bits: Int) throws {
    let scratch = try TemporaryDirectory()
    let path = scratch.path("locks")
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    #expect(chmod(path, mode_t(bits)) == 0)
    let error = #expect(throws: TokenKitError.self) { try XDGDirectories.ensurePrivateDirectory(path) }
    #expect(error?.code == .unusableFile)
    #expect(
      error?.message == "\(path) is open to other users (mode \(String(bits, radix: 8))), and must be private to you",
      "\(error?.message ?? "")")
    #expect(error?.recovery == "Run `chmod 700 \(path)`.")
    #expect(mode(path) == bits)
  }

  @Test func aDiscoveryCacheInAnOpenDirectoryStoresNothing() throws {
    let scratch = try TemporaryDirectory()
    let path = scratch.path("discovery")
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    #expect(chmod(path, 0o755) == 0)
    let cache = FileDiscoveryCache(directory: path)
    cache.store(issuer: "https://id.example", document: Array("{}".utf8), fetchedAt: Date())
    #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty)
  }

  @Test func ensurePrivateDirectoryCreatesParentsPrivately() throws {
    let scratch = try TemporaryDirectory()
    let path = scratch.path("a/b/c")
    try XDGDirectories.ensurePrivateDirectory(path)
    try XDGDirectories.ensurePrivateDirectory(path)
    for created in ["a", "a/b", "a/b/c"] { #expect(mode(scratch.path(created)) == 0o700) }
    let file = scratch.path("file")
    #expect(FileManager.default.createFile(atPath: file, contents: Data()))
    let error = #expect(throws: TokenKitError.self) { try XDGDirectories.ensurePrivateDirectory(file) }
    #expect(error?.message == "\(file) is not a directory")
  }

  /// Every directory from the root tokenctl owns down is checked; those above are the user's.
  @Test func everyDirectoryBelowTheRootIsCheckedAndNoneAbove() throws {
    let scratch = try TemporaryDirectory()
    try FileManager.default.createDirectory(atPath: scratch.path("elsewhere"), withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path("base"), withDestinationPath: scratch.path("elsewhere"))
    // A symlinked base directory, like a symlinked ~/.cache, is fine.
    try XDGDirectories.ensurePrivateDirectory(scratch.path("base/tokenctl/run"), within: scratch.path("base/tokenctl"))
    #expect(mode(scratch.path("elsewhere/tokenctl/run")) == 0o700)

    try FileManager.default.createSymbolicLink(
      atPath: scratch.path("base/linked"), withDestinationPath: scratch.path("elsewhere/tokenctl"))
    let error = #expect(throws: TokenKitError.self) {
      try XDGDirectories.ensurePrivateDirectory(scratch.path("base/linked/run"), within: scratch.path("base/linked"))
    }
    #expect(error?.message.hasPrefix("\(scratch.path("base/linked")) is a symbolic link") == true)

    #expect(chmod(scratch.path("elsewhere/tokenctl"), 0o755) == 0)
    let open = #expect(throws: TokenKitError.self) {
      try XDGDirectories.ensurePrivateDirectory(
        scratch.path("base/tokenctl/run"), within: scratch.path("base/tokenctl"))
    }
    #expect(open?.recovery == "Run `chmod 700 \(scratch.path("base/tokenctl"))`.")
  }
}
