import Foundation
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenCtlCLI

/// The folders tokenctl keeps for itself: `tokenctl` under the runtime and cache
/// directories, and everything below, must be the user's own, private and no symlink, or a
/// lock or a cached discovery document would live where someone else decides.
@Suite struct PrivateDirectoriesTests {
  static let key = AccountKey(type: "graph", id: "oid-1")
  let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-private-\(UUID().uuidString)")

  init() throws {
    try FileManager.default.createDirectory(atPath: scratch.path + "/elsewhere", withIntermediateDirectories: true)
  }

  func context(_ environment: [String: String]) throws -> CLIContext {
    CLIContext(
      registry: try BuiltinPlugins.registry(), makeStore: { InMemoryTokenStore(group: $0) },
      clock: FixedClock(Date(timeIntervalSince1970: 1_800_000_000)), environment: environment,
      output: CapturedOutput())
  }

  func symlink(_ name: String) throws -> String {
    let path = scratch.path + "/" + name
    try FileManager.default.createDirectory(
      atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: scratch.path + "/elsewhere")
    return path
  }

  @Test func aRuntimeDirectoryThatIsASymlinkIsRefused() async throws {
    let link = try symlink("run/tokenctl")
    let locks = try context(["HOME": scratch.path, "XDG_RUNTIME_DIR": scratch.path + "/run"]).accountLocks
    let error = await #expect(throws: TokenKitError.self) {
      try await locks.acquire(Self.key, group: "default", timeout: .zero).release()
    }
    #expect(error?.message.hasPrefix("\(link) is a symbolic link") == true, "\(error?.message ?? "")")
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/elsewhere").isEmpty)
  }

  /// Without XDG_RUNTIME_DIR the locks live under the cache directory, which then holds them.
  @Test func theCacheDirectoryHoldingTheLocksMustBePrivateToo() async throws {
    let link = try symlink("cache/tokenctl")
    let environment = ["HOME": scratch.path, "XDG_CACHE_HOME": scratch.path + "/cache"]
    let error = await #expect(throws: TokenKitError.self) {
      try await context(environment).accountLocks.acquire(Self.key, group: "default", timeout: .zero).release()
    }
    #expect(error?.message.hasPrefix("\(link) is a symbolic link") == true, "\(error?.message ?? "")")
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/elsewhere").isEmpty)

    try FileManager.default.removeItem(atPath: link)
    try FileManager.default.createDirectory(atPath: link, withIntermediateDirectories: false)
    #expect(chmod(link, 0o755) == 0)
    let open = await #expect(throws: TokenKitError.self) {
      try await context(environment).accountLocks.acquire(Self.key, group: "default", timeout: .zero).release()
    }
    #expect(open?.recovery == "Run `chmod 700 \(link)`.")

    #expect(chmod(link, 0o700) == 0)
    try await context(environment).accountLocks.acquire(Self.key, group: "default", timeout: .zero).release()
  }

  /// The user's own XDG base directories are theirs to arrange: a symlinked ~/.cache is fine.
  @Test func theBaseDirectoriesMayBeSymlinks() async throws {
    let link = try symlink("cache")
    let environment = ["HOME": scratch.path, "XDG_CACHE_HOME": link]
    try await context(environment).accountLocks.acquire(Self.key, group: "default", timeout: .zero).release()
    #expect(FileManager.default.fileExists(atPath: scratch.path + "/elsewhere/tokenctl/run/locks"))
  }
}
