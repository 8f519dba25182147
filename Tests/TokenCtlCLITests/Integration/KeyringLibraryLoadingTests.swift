import Foundation
import TestSupport
import Testing

/// libsecret, and the GLib and libgcrypt under it, are opened on the first keyring
/// operation and not at start-up (Sources/CLibSecret): the loader's own account of what it
/// loaded (`LD_DEBUG=libs`, glibc's) shows none of them in a command that never reaches
/// the keyring, GLib's in one that reads it, and libsecret and libgcrypt only where one
/// writes (reads need no Diffie-Hellman session: tokenctl-keyring(5), "Sessions").
@Suite struct KeyringLibraryLoadingTests {
  /// The sonames a keyring operation brings in, none of which the executables link.
  static let keyringLibraries = readLibraries + writeLibraries
  /// What a read of the keyring loads.
  static let readLibraries = ["libglib-2.0.so", "libgio-2.0.so", "libgobject-2.0.so"]
  /// What only a write (or a read in libsecret's session) adds.
  static let writeLibraries = ["libsecret-1.so", "libgcrypt.so"]

  /// The libraries the dynamic loader initialized, by path, from its `LD_DEBUG=libs` trace.
  static func loadedLibraries(_ trace: String) -> [String] {
    trace.split(separator: "\n").compactMap { line in
      line.range(of: "calling init: ").map { String(line[$0.upperBound...]) }
    }
  }

  /// Standard error without the loader's lines (`  1234:\tcalling init: …`).
  static func withoutTrace(_ stderr: String) -> String {
    stderr.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains(":\t") }
      .joined(separator: "\n")
  }

  static func keyringLibraries(in trace: String) -> [String] {
    loadedLibraries(trace).filter { path in keyringLibraries.contains { path.contains("/\($0)") } }
  }

  @Test(arguments: [
    (TestProcess.tokenctl, ["--version"]), (TestProcess.tokenctl, ["--help"]),
    (GitCredentialTests.helper, ["--version"]),
  ])
  func aCommandWithoutTheKeyringLoadsNoneOfItsLibraries(_ executable: String, _ arguments: [String]) async throws {
    var environment = ProcessInfo.processInfo.environment
    environment["LD_DEBUG"] = "libs"
    let result = try await TestProcess.run(executable, arguments, environment: environment)
    #expect(result.status == 0, "\(result.stdout)")
    let loaded = Self.loadedLibraries(result.stderr)
    // The trace is there: libc is always initialized; except in the front end, linked
    // statically, which answers `--version` itself and has no loader to trace.
    if try await !Self.isStatic(executable) {
      try #require(loaded.contains { $0.contains("/libc.so") }, "no LD_DEBUG trace: \(result.stderr.prefix(500))")
    }
    #expect(Self.keyringLibraries(in: result.stderr) == [])
  }

  /// Whether `executable` has no program interpreter: a static executable.
  static func isStatic(_ executable: String) async throws -> Bool {
    let headers = try await TestProcess.run("readelf", ["-lW", executable])
    return !headers.stdout.contains("INTERP")
  }

  @Test func aKeyringReadLoadsGLibButNotLibsecretAndWorks() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    var environment = session.environment
    environment["LD_DEBUG"] = "libs"
    // The direct path's loading is what is checked: a client the agent answers loads none.
    environment["TOKENCTL_AGENT"] = "0"
    let result = try await TestProcess.run(TestProcess.tokenctl, ["list"], environment: environment)
    #expect(result.status == 0, "\(Self.withoutTrace(result.stderr))")
    // An empty listing says so on standard error.
    #expect(Self.withoutTrace(result.stderr).hasPrefix("No accounts in group 'default'.\nhint: "))
    let loaded = Self.keyringLibraries(in: result.stderr)
    for library in Self.readLibraries {
      #expect(loaded.contains { $0.contains("/\(library)") }, "\(library) not loaded: \(loaded)")
    }
    for library in Self.writeLibraries {
      #expect(!loaded.contains { $0.contains("/\(library)") }, "\(library) loaded: \(loaded)")
    }
  }

  /// A libsecret that cannot be loaded (here an empty file the loader finds first) is the
  /// keyring being unavailable for writes, with the package to install, not a crash at
  /// start-up; reads, which need no GLib (SecretServiceWire), or only GIO where they go
  /// through GDBus, still work.
  @Test func aMissingLibsecretIsAnUnavailableKeyringThatNamesThePackage() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    let libraries = try TemporaryDirectory()
    try Data().write(to: URL(fileURLWithPath: libraries.path("libsecret-1.so.0")))
    var environment = session.environment
    environment["LD_LIBRARY_PATH"] = libraries.url.path
    // The direct path's failure is what is checked: an agent would answer from its own keyring.
    environment["TOKENCTL_AGENT"] = "0"
    environment["DISPLAY"] = nil
    environment["WAYLAND_DISPLAY"] = nil
    // A sign-in checks that the keyring is writable before anything else.
    let result = try await TestProcess.run(
      TestProcess.tokenctl,
      ["login", "graph", "--client-id", "11111111-2222-3333-4444-555555555555", "--timeout", "3"],
      environment: environment)
    #expect(result.status == 8, "\(result.stderr)")
    #expect(result.stderr.contains("cannot load libsecret"), "\(result.stderr)")
    #expect(result.stderr.contains("libsecret-1-0"), "\(result.stderr)")
    let list = try await TestProcess.run(TestProcess.tokenctl, ["list"], environment: environment)
    #expect(list.status == 0, "\(list.stderr)")
    // Commands that need no keyring still work.
    let version = try await TestProcess.run(TestProcess.tokenctl, ["--version"], environment: environment)
    #expect(version.status == 0, "\(version.stderr)")
  }
}
