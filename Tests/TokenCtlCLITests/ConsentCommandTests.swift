import ApplicationConsent
import Foundation
import NativeAppSupport
import SecretServiceStore
import TestSupport
import Testing
import TokenCtlCLI
import TokenKit
import TokenStoreTesting

/// `allow`, `deny` and `apps`: in-process against an in-memory store and a state directory
/// of the test's own, then as the real binary from two processes at once and against the
/// real keyring.
@Suite struct ConsentCommandTests {
  static let now = Date(timeIntervalSince1970: 1_800_000_000)
  let backing = InMemoryTokenStore.Backing()
  let home: TemporaryDirectory
  let environment: [String: String]
  /// A program that is no interpreter, so that `allow` adds no note: /usr/bin/env.
  let env: String

  init() throws {
    home = try TemporaryDirectory()
    environment = [
      "HOME": home.url.path, "XDG_STATE_HOME": home.path("state"), "PATH": "/usr/bin:/bin",
      "XDG_CONFIG_HOME": home.path("config"), "XDG_CACHE_HOME": home.path("cache"),
    ]
    env = URL(fileURLWithPath: "/usr/bin/env").resolvingSymlinksInPath().path
    for (type, id, name) in [("github", "1001", "ada"), ("gitlab", "77", "grace"), ("gitlab", "78", "ada")] {
      try InMemoryTokenStore(group: "default", backing: backing).save(
        Account(type: type, id: id, name: name, group: "default", createdAt: Self.now, updatedAt: Self.now),
        tokens: TokenSet(accessToken: "SECRET-\(id)", refreshToken: "REFRESH", expiresAt: nil))
    }
  }

  var directories: XDGDirectories { XDGDirectories(environment: environment) }

  func run(_ arguments: String...) async throws -> (status: Int32, stdout: String, stderr: String) {
    try await runInMemory(arguments, backing: backing, clock: FixedClock(Self.now), environment: environment)
  }

  func auditLines() throws -> [String] {
    try String(contentsOfFile: directories.state + "/audit.log", encoding: .utf8).split(separator: "\n").map(
      String.init)
  }

  /// `allow` reads the type files once: a broken one is warned of once.
  @Test func allowWarnsOfABrokenTypeFileOnce() async throws {
    let types = home.path("config") + "/tokenctl/types"
    try FileManager.default.createDirectory(atPath: types, withIntermediateDirectories: true)
    try "this is not TOML = = =\n".write(toFile: types + "/broken.toml", atomically: true, encoding: .utf8)
    let allow = try await run("allow", "env", "github:ada")
    #expect(allow.status == 0, "\(allow.stderr)")
    #expect(allow.stderr.components(separatedBy: "broken.toml").count == 2, "\(allow.stderr)")
  }

  @Test func allowingAccountsShowsInApps() async throws {
    let allow = try await run("allow", "env", "github:ada", "grace")
    #expect(allow.status == 0, "\(allow.stderr)")
    #expect(allow.stdout == "Allowed \(env) to get tokens of github:ada, gitlab:grace in group default.\n")
    let grants = ApplicationGrants(directories: directories, warn: { _ in })
    #expect(
      grants.decision(application: env, group: "default", account: AccountKey(type: "gitlab", id: "77")) == .allowed)
    #expect(
      grants.decision(application: env, group: "default", account: AccountKey(type: "gitlab", id: "78"))
        == .undecided)

    // The agent records a use; `apps` shows it.
    grants.noteUse(application: env, group: "default", at: Self.now.addingTimeInterval(-120))
    let apps = try await run("apps")
    #expect(apps.status == 0)
    let width = max(env.count, "APPLICATION".count) + 2
    func pad(_ text: String) -> String { text + String(repeating: " ", count: width - text.count) }
    #expect(
      apps.stdout == """
        \(pad("APPLICATION"))GROUP    ACCOUNTS                  STATE    SINCE    LAST USE
        \(pad(env))default  github:ada, gitlab:grace  allowed  0 s ago  2 min ago

        """)
    #expect(!apps.stdout.contains("SECRET"))
    #expect(
      try auditLines() == [
        "2027-01-15T08:00:00Z allowed app=\(env) group=default account=github:ada via=cli",
        "2027-01-15T08:00:00Z allowed app=\(env) group=default account=gitlab:grace via=cli",
      ])
  }

  @Test func anUnknownOrAmbiguousAccountGrantsNothing() async throws {
    let unknown = try await run("allow", "env", "github:nobody")
    #expect(unknown.status == 2 && unknown.stderr.contains("no account 'github:nobody' in group 'default'"))
    let ambiguous = try await run("allow", "env", "ada")
    #expect(ambiguous.status == 3 && ambiguous.stderr.contains("'ada' matches 2 accounts"))
    let apps = try await run("apps")
    #expect(apps.status == 0 && apps.stdout.isEmpty)
    #expect(apps.stderr == "No application is allowed or denied; 'tokenctl allow' allows one.\n")
    #expect(!FileManager.default.fileExists(atPath: directories.state + "/grants.json"))
  }

  @Test func accountsOrAllIsAUsageError() async throws {
    let neither = try await run("allow", "env")
    #expect(neither.status == 64 && neither.stderr.contains("or give --all for every account of the group"))
    let both = try await run("allow", "env", "github:ada", "--all")
    #expect(both.status == 64 && both.stderr.contains("not both"))
    let missing = try await run("allow", "no-such-program-here", "--all")
    #expect(missing.status == 64 && missing.stderr.contains("no program 'no-such-program-here' in PATH"))
    #expect(missing.stderr.contains("hint: Give the program's full path"))
  }

  /// An application argument that names no program or app is the command line's fault:
  /// the usage status, 64, not 1 as a keyring's failure.
  @Test(arguments: [
    ("", "the application is empty"), ("flatpak:org.example", "names no Flatpak app"),
    ("/etc/passwd", "/etc/passwd is not an executable file"),
    ("./no-such-file", "cannot find the program"),
  ])
  func anApplicationThatIsNoProgramIsAUsageError(argument: String, message: String) async throws {
    let allow = try await run("allow", argument, "--all")
    #expect(allow.status == 64 && allow.stderr.contains(message), "\(allow.stderr)")
    let deny = try await run("deny", argument)
    #expect(deny.status == 64 && deny.stderr.contains(message), "\(deny.stderr)")
    #expect(!FileManager.default.fileExists(atPath: directories.state + "/grants.json"))
  }

  @Test func allInJSONThenDenied() async throws {
    #expect(try await run("allow", "env", "--all", "--group", "work").status == 0)
    let json = try await run("apps", "--json")
    #expect(json.status == 0)
    let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    #expect(document["format"] as? Int == 1)
    let entry = try #require((document["applications"] as? [[String: Any]])?.first)
    #expect(entry["application"] as? String == env && entry["group"] as? String == "work")
    #expect(entry["state"] as? String == "allowed" && entry["all_accounts"] as? Bool == true)
    #expect(entry["since"] as? String == "2027-01-15T08:00:00Z" && entry["last_use"] == nil)

    let deny = try await run("deny", env)
    #expect(deny.status == 0)
    #expect(deny.stdout.hasPrefix("Denied \(env) in every group"))
    let apps = try await run("apps")
    #expect(apps.stdout.contains("all    -         denied"), "\(apps.stdout)")
    #expect(!apps.stdout.contains("work"))
    #expect(try auditLines().last == "2027-01-15T08:00:00Z denied app=\(env) group=* via=cli")
    let grants = ApplicationGrants(directories: directories, warn: { _ in })
    #expect(
      grants.decision(application: env, group: "work", account: AccountKey(type: "github", id: "1001")) == .denied)
  }

  @Test func allowingAnInterpreterOrAScriptSaysWhatThatMeans() async throws {
    let python = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path
    let interpreter = try await run("allow", "python3", "--all")
    #expect(interpreter.status == 0)
    #expect(
      interpreter.stdout == """
        Allowed \(python) to get tokens of every account in group default.
        Note: \(python) runs Python programs; every one of them you run is allowed too.

        """)
    let script = try await home.script("tool", "#!/bin/sh\n")
    let allowed = try await run("allow", script, "--all")
    #expect(allowed.status == 0 && allowed.stdout.contains("is a script, and the agent sees the program that runs it"))
  }

  @Test func tokenctlItselfIsAlwaysAllowed() async throws {
    let allow = try await run("allow", TestProcess.tokenctl, "--all")
    #expect(allow.status == 0 && allow.stdout.contains("is tokenctl's own and always allowed"), "\(allow)")
    #expect(!FileManager.default.fileExists(atPath: directories.state + "/grants.json"))
  }

  @Test func anUntrustedGrantsFileIsReportedNotOverwritten() async throws {
    #expect(try await run("allow", "env", "--all").status == 0)
    #expect(chmod(directories.state + "/grants.json", 0o666) == 0)
    let apps = try await run("apps")
    #expect(apps.status == 18 && apps.stderr.contains("other users may change it (mode 666)"), "\(apps.stderr)")
    #expect(apps.stderr.contains("hint: Check that it holds only what you allowed"))
    let allow = try await run("allow", "env", "github:ada")
    #expect(allow.status == 18 && allow.stderr.contains("will not change"), "\(allow.stderr)")
  }

  /// A grants file in a directory others may write is unusable too: status 18, the
  /// status of a file of tokenctl's that is unsafe to use.
  @Test func aGrantsDirectoryOpenToOthersIsAnUnusableFile() async throws {
    #expect(try await run("allow", "env", "--all").status == 0)
    #expect(chmod(directories.state, 0o777) == 0)
    let apps = try await run("apps")
    #expect(apps.status == 18 && apps.stderr.contains("its directory is not a private directory"), "\(apps.stderr)")
    let json = try await run("apps", "--json")
    #expect(json.stdout.contains(#""code" : "unusable-file""#) && json.stdout.contains(#""exit" : 18"#), "\(json)")
  }

  /// Two `tokenctl allow` processes writing at once lose no grant: the lock is between
  /// processes, not only between threads.
  @Test func twoProcessesLoseNoGrant() async throws {
    var environment = environment
    environment["TOKENCTL_AGENT"] = "0"
    let script = """
      for i in 0 1 2 3 4 5 6 7 8 9; do "$0" allow /usr/bin/env --all --group "$1$i" >/dev/null || exit 1; done
      """
    let writers = try ["a", "b"].map {
      try TestProcess("/bin/sh", ["-c", script, TestProcess.tokenctl, $0], environment: environment)
    }
    for writer in writers { #expect(await writer.exitStatus() == 0) }
    let entries = try ApplicationGrants(directories: directories, warn: { _ in }).entries()
    #expect(
      Set(entries.compactMap(\.group)) == Set(["a", "b"].flatMap { prefix in (0..<10).map { "\(prefix)\($0)" } }))
  }

  /// The binary against the shared test keyring: accounts are resolved there, and the
  /// grant keeps the account's id.
  @Test func theBinaryResolvesAccountsInTheKeyring() async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    let group = TokenStoreConformance.freshGroup()
    let store = SecretServiceTokenStore(group: group)
    try store.save(
      Account(
        type: "graph", id: "oid-ada", name: "ada@contoso.com", group: group, createdAt: Date(), updatedAt: Date()),
      tokens: TokenSet(accessToken: "SECRET-\(UUID().uuidString)", refreshToken: nil, expiresAt: nil))
    defer { _ = try? store.remove(AccountKey(type: "graph", id: "oid-ada")) }
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_STATE_HOME"] = home.path("state")
    func tokenctl(_ arguments: String...) async throws -> ProcessResult {
      try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
    }
    let allow = try await tokenctl("allow", "/usr/bin/env", "ada@contoso.com", "--group", group)
    #expect(allow.status == 0 && allow.stdout.contains("graph:ada@contoso.com in group \(group)"), "\(allow.stderr)")
    await #expect(try tokenctl("allow", "/usr/bin/env", "graph:nobody", "--group", group).status == 2)
    let json = try await tokenctl("apps", "--json")
    #expect(json.status == 0 && json.stdout.contains(#""id" : "oid-ada""#), "\(json.stdout)")
    #expect(!json.stdout.contains("SECRET"))
  }
}
