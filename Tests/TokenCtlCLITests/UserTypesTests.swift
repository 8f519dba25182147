import Foundation
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenCtlCLI

/// Account types from descriptor files: loading from the XDG directories, skipping bad
/// files with a warning, and `tokenctl types --check`.
@Suite struct UserTypesTests {
  let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-types-\(UUID().uuidString)")
  var userDirectory: String { scratch.path + "/config/tokenctl/types" }
  var systemDirectory: String { scratch.path + "/system/tokenctl/types" }
  var environment: [String: String] {
    ["HOME": scratch.path, "XDG_CONFIG_HOME": scratch.path + "/config", "XDG_CONFIG_DIRS": scratch.path + "/system"]
  }

  init() throws {
    try FileManager.default.createDirectory(atPath: userDirectory, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: systemDirectory, withIntermediateDirectories: true)
  }

  @discardableResult
  func write(_ text: String, to path: String, mode: Int = 0o644) throws -> String {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    return path
  }

  func type(_ id: String, _ extra: String = "") -> String {
    bare(id) + "scopes = [\"openid\", \"email\"]\n" + extra
  }

  /// A type file with what a type needs only: no scopes.
  func bare(_ id: String) -> String {
    "id = \"\(id)\"\ndisplay_name = \"\(id) sign-in\"\nissuer = \"https://\(id).example.org\"\n"
  }

  /// The name of the user `uid`, as the messages give it.
  static func userName(_ uid: uid_t) -> String? {
    getpwuid(uid).flatMap { $0.pointee.pw_name.map { String(cString: $0) } }
  }

  func run(_ arguments: String...) async throws -> (status: Int32, stdout: String, stderr: String) {
    try await runInMemory(
      arguments, clock: FixedClock(Date(timeIntervalSince1970: 1_800_000_000)), environment: environment)
  }

  @Test func typesFromBothDirectoriesAreListedWithTheirFile() async throws {
    let corp = try write(type("corp"), to: userDirectory + "/corp.toml")
    let site = try write(type("site"), to: systemDirectory + "/site.toml")
    let result = try await run("types")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.isEmpty)
    #expect(result.stdout.contains("corp  corp sign-in\n  source:"))
    #expect(result.stdout.contains(corp))
    #expect(result.stdout.contains(site))
    #expect(result.stdout.contains("https://corp.example.org (endpoints discovered)"))
  }

  @Test func aBadFileIsSkippedWithOneWarningAndTheOthersLoad() async throws {
    try write(type("corp"), to: userDirectory + "/corp.toml")
    let bad = try write(
      "id = \"bad\"\n[endpoints]\nauthorization = \"https://a.example/a\"\ntoken = \"http://a.example/t\"\n",
      to: userDirectory + "/bad.toml")
    try write("not toml", to: userDirectory + "/notes.txt")
    let result = try await run("types")
    #expect(result.status == 0)
    #expect(
      result.stderr
        == "tokenctl: warning: skipped \(bad):4:9: token must be an https URL (http only on a loopback host)\n")
    #expect(result.stdout.contains("corp  corp sign-in"))
    #expect(!result.stdout.contains("bad  "))
    // The registry that parses TYPE:NAME knows the user's type too.
    let token = try await run("token", "corp:ada")
    #expect(token.status == 2, "\(token.stderr)")
    #expect(token.stderr.contains("corp:ada") || token.stderr.contains("ada"))
  }

  @Test func aDuplicateIdIsReportedWithBothSourcesAndTheLaterFileSkipped() async throws {
    let user = try write(type("corp"), to: userDirectory + "/corp.toml")
    let system = try write(type("corp"), to: systemDirectory + "/corp.toml")
    let builtin = try write(type("graph"), to: userDirectory + "/graph.toml")
    let result = try await run("types")
    #expect(result.status == 0)
    #expect(
      result.stderr == """
        tokenctl: warning: skipped \(builtin): account type 'graph' is defined twice: by plugin MicrosoftGraph and by \(builtin). Rename or remove one of them.
        tokenctl: warning: skipped \(system): account type 'corp' is defined twice: by \(user) and by \(system). Rename or remove one of them.

        """)
    #expect(result.stdout.contains(user))
  }

  @Test func aClientSecretNeedsAFileOnlyTheUserCanRead() async throws {
    let text = type("corp", "client_id = \"app\"\nclient_secret = \"s3cret\"\n")
    let open = try write(text, to: userDirectory + "/corp.toml", mode: 0o640)
    let refused = try await run("types")
    #expect(
      refused.stderr
        == "tokenctl: warning: skipped \(open): \(open) holds a client_secret but others can read it (mode 640). "
        + "Run `chmod 600 \(open)`, and consider asking the provider for a new secret.\n")
    #expect(!refused.stdout.contains("corp  "))
    #expect(!refused.stderr.contains("s3cret"))

    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: open)
    let accepted = try await run("types")
    #expect(accepted.stderr.isEmpty)
    #expect(accepted.stdout.contains("corp  corp sign-in"))
    #expect(accepted.stdout.contains("client_secret_basic"))
    #expect(!accepted.stdout.contains("s3cret"))
  }

  /// A type file names the endpoints tokens go to, so one that
  /// others may change is skipped like any other bad file, and `--check` says why.
  @Test(arguments: [0o666, 0o620, 0o646])
  func aFileOthersMayWriteIsSkippedAndCheckSaysWhy(mode: Int) async throws {
    let corp = try write(type("corp"), to: userDirectory + "/corp.toml", mode: mode)
    let owner = try #require(Self.userName(geteuid()))
    let problem =
      "\(corp) may be changed by other users (mode \(String(mode, radix: 8)), owner \(owner)), "
      + "and whoever changes it decides where your sign-ins go. Run `chmod go-w \(corp)`."
    let result = try await run("types")
    #expect(result.status == 0)
    #expect(result.stderr == "tokenctl: warning: skipped \(corp): \(problem)\n")
    #expect(!result.stdout.contains("corp  "))

    let check = try await run("types", "--check", corp)
    #expect(check.status == ExitStatus.notConfigured.rawValue)
    #expect(check.stdout == problem + "\n")
  }

  @Test(.enabled(if: geteuid() == 0, "only root can give a file away"), arguments: [true, false])
  func aFileOwnedBySomeoneElseIsSkipped(inSystemDirectory: Bool) async throws {
    let corp = try write(type("corp"), to: (inSystemDirectory ? systemDirectory : userDirectory) + "/corp.toml")
    #expect(chown(corp, 65534, 65534) == 0)
    let result = try await run("types")
    #expect(result.status == 0)
    let owner = Self.userName(65534) ?? "uid 65534"
    #expect(
      result.stderr.hasPrefix(
        "tokenctl: warning: skipped \(corp): \(corp) belongs to another user (mode 644, owner \(owner)), "),
      "\(result.stderr)")
    #expect(!result.stdout.contains("corp  "))
    let check = try await run("types", "--check", corp)
    #expect(check.status == ExitStatus.notConfigured.rawValue)
    #expect(check.stdout.contains("chown"))
  }

  /// `types` lists the types as commands use them: with config.toml's settings applied.
  @Test func typesShowWhatConfigTomlSets() async throws {
    try write(type("corp"), to: userDirectory + "/corp.toml")
    try write(
      "[types.graph]\nclient_id = \"graph-app\"\n[types.corp]\nclient_id = \"corp-app\"\n",
      to: scratch.path + "/config/tokenctl/config.toml")
    let text = try await run("types")
    #expect(text.status == 0, "\(text.stderr)")
    let lines = text.stdout.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
    #expect(lines.contains("client id: graph-app"), "\(text.stdout)")
    #expect(lines.contains("client id: corp-app"))
    #expect(lines.contains("source: plugin MicrosoftGraph + config.toml"))

    let json = try await run("types", "--json")
    #expect(json.status == 0, "\(json.stderr)")
    let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    let types = try #require(document["types"] as? [[String: Any]])
    let clientIDs = Dictionary(
      uniqueKeysWithValues: types.map { ($0["id"] as? String ?? "", $0["client_id"] as? String) })
    #expect(clientIDs["graph"] == "graph-app")
    #expect(clientIDs["corp"] == "corp-app")
    #expect(clientIDs["oidc"] == .some(nil))
  }

  /// A type that names no scopes signs in with `openid` (without it the issuer gives no ID
  /// token and userinfo refuses the token): `--check` and `types` say so, since a sign-in
  /// that needs more will not get it.
  @Test func aTypeWithoutScopesIsToldWhatItsSignInAsksFor() async throws {
    let bare = try write(self.bare("bare"), to: userDirectory + "/bare.toml")
    let check = try await run("types", "--check", bare)
    #expect(check.status == 0)
    #expect(
      check.stdout
        == "\(bare): ok (type bare)\n  note: no scopes named: a sign-in asks for openid, and a client credentials "
        + "sign-in for none; set scopes = [...] for more\n")
    let listed = try await run("types")
    let lines = listed.stdout.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
    #expect(lines.contains("scopes: none named (a sign-in asks for openid)"), "\(listed.stdout)")
  }

  @Test func checkReportsEachFileAndExitsNotConfiguredOnAnyProblem() async throws {
    let good = try write(type("corp"), to: scratch.path + "/corp.toml")
    let ok = try await run("types", "--check", good)
    #expect(ok.status == 0)
    #expect(ok.stdout == "\(good): ok (type corp)\n")

    let bad = try write(
      "id = \"x\"\nissuer = \"https://x.example\"\n[authorization_parameters]\nredirect_uri = \"https://evil.example\"\nclent_id = 1\n",
      to: scratch.path + "/x.toml")
    let graph = try write(type("graph"), to: scratch.path + "/graph.toml")
    let missing = scratch.path + "/missing.toml"
    let result = try await run("types", "--check", good, bad, graph, missing)
    #expect(result.status == ExitStatus.notConfigured.rawValue)
    #expect(
      result.stdout == """
        \(good): ok (type corp)
        \(bad):4:1: authorization_parameters must not set redirect_uri: tokenctl sets this protocol parameter itself; use [redirect]
        \(bad):5:12: expected a string for clent_id in [authorization_parameters], found an integer
        \(graph): account type 'graph' is already defined by plugin MicrosoftGraph
        \(missing): no such file

        """)
  }

  @Test func checkingAFileThatIsAlsoLoadedIsNoDuplicate() async throws {
    let corp = try write(type("corp"), to: userDirectory + "/corp.toml")
    let result = try await run("types", "--check", corp)
    #expect(result.status == 0)
    #expect(result.stdout == "\(corp): ok (type corp)\n")
  }

  @Test func checkNeedsFilesAndFilesNeedCheck() async throws {
    #expect(try await run("types", "--check").status == ExitStatus.usage.rawValue)
    #expect(try await run("types", "corp.toml").status == ExitStatus.usage.rawValue)
  }
}
