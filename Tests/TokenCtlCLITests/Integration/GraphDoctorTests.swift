import Foundation
import TestSupport
import Testing
import TokenStoreTesting

/// `doctor --online` against the Microsoft stand-in (`Tests/Support/microsoft-identity-platform.py`,
/// each behaviour cited there) with the built-in `graph` type as a new user configures it:
/// the commonest registration mistakes are found before anyone signs in, and what no
/// answer of Microsoft's shows is named with where to look in the portal.
@Suite(.serialized, .timeLimit(.minutes(3))) struct GraphDoctorTests {
  let platform: MicrosoftIdentityPlatform
  let directory: TemporaryDirectory
  let group = TokenStoreConformance.freshGroup()

  init() async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    platform = try await MicrosoftIdentityPlatform.start()
    directory = try TemporaryDirectory()
    try configure()
  }

  var home: URL { directory.url.appendingPathComponent("home") }

  func configure(tenant: String = "common", clientID: String? = nil) throws {
    let folder = home.appendingPathComponent("config/tokenctl")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let file = folder.appendingPathComponent("config.toml")
    try platform.graphSettings(tenant: tenant, clientID: clientID).write(to: file, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
  }

  /// `doctor --online --json` on a desktop, or with `headless` where nothing shows a
  /// browser (so that `login` signs in with a code).
  func doctor(headless: Bool = false) async throws -> (status: Int32, checks: [String: [String: Any]]) {
    var environment = GitCredentialTests.environment(home: home, group: group)
    environment["TOKENCTL_AGENT_SOCKET"] = directory.path("no-agent.sock")
    environment["TOKENCTL_LOG"] = nil
    environment["TOKENCTL_CONFIG"] = nil
    environment = platform.environment(environment, log: directory.path("browser.log"))
    if headless {
      for name in ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER"] { environment[name] = nil }
    }
    let result = try await TestProcess.run(
      TestProcess.tokenctl, ["doctor", "--online", "--json"], environment: environment)
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
    let checks = try #require(document["checks"] as? [[String: Any]])
    var byID: [String: [String: Any]] = [:]
    for check in checks { if let id = check["id"] as? String { byID[id] = check } }
    return (result.status, byID)
  }

  static func text(_ check: [String: Any]?) -> String {
    "\(check?["status"] ?? "missing") \(check?["detail"] ?? "") fix: \(check?["fix"] ?? "")"
  }

  /// Microsoft answers a tenant it does not know with AADSTS90002, at its keys as at its
  /// discovery document: a 400 is no "ok".
  @Test func aTenantMicrosoftDoesNotKnowFails() async throws {
    try configure(tenant: "0badc0de-7e57-4000-8000-00000000dead")
    let (status, checks) = try await doctor()
    #expect(status != 0)
    let server = checks["host:\(platform.host)"]
    #expect(server?["status"] as? String == "fail", "\(Self.text(server))")
    #expect((server?["detail"] as? String)?.contains("AADSTS90002") == true, "\(Self.text(server))")
    #expect((server?["fix"] as? String)?.contains("tenant") == true, "\(Self.text(server))")
  }

  /// A registration whose redirects leave out http://localhost is found by a request that
  /// signs no one in; the one that has it is confirmed.
  @Test func aRegistrationWithoutTheLocalhostRedirectFails() async throws {
    let registered = try await doctor()
    let holds = registered.checks["registration:graph:redirect"]
    #expect(holds?["status"] as? String == "ok", "\(Self.text(holds))")
    #expect((holds?["detail"] as? String)?.contains("Mobile and desktop applications") == true, "\(Self.text(holds))")

    try await platform.control(["set": ["redirect_uris": ["https://app.contoso.test/signin"]]])
    let (status, checks) = try await doctor()
    #expect(status != 0)
    let redirect = checks["registration:graph:redirect"]
    #expect(redirect?["status"] as? String == "fail", "\(Self.text(redirect))")
    #expect((redirect?["detail"] as? String)?.contains("AADSTS50011") == true, "\(Self.text(redirect))")
    #expect(
      (redirect?["fix"] as? String)?.contains("Mobile and desktop applications") == true, "\(Self.text(redirect))")
    // Nothing was signed in and no code issued on the way.
    #expect(
      try platform.authorizations().allSatisfy { ($0["outcome"] as? [String: Any])?["result"] as? String != "code" })
  }

  /// "Allow public client flows" shows only when a device sign-in completes: doctor says
  /// so and where to look, a warning where signing in means a code (no display).
  @Test func publicClientFlowsAreNamedWithWhereToLook() async throws {
    try configure(clientID: platform.client("public_no_device").id)
    let desktop = try await doctor()
    let onDesktop = desktop.checks["registration:graph:public-client-flows"]
    #expect(onDesktop?["status"] as? String == "ok", "\(Self.text(onDesktop))")
    #expect((onDesktop?["detail"] as? String)?.contains("Allow public client flows") == true)

    let headless = try await doctor(headless: true)
    let withoutDisplay = headless.checks["registration:graph:public-client-flows"]
    #expect(withoutDisplay?["status"] as? String == "warn", "\(Self.text(withoutDisplay))")
    let fix = withoutDisplay?["fix"] as? String ?? ""
    #expect(fix.contains("\"Allow public client flows\"") && fix.contains("tokenctl login graph --device"), "\(fix)")
    // No device sign-in was started to find out.
    #expect(try platform.requests().allSatisfy { ($0["path"] as? String)?.hasSuffix("/devicecode") != true })
  }
}
