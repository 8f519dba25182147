import Foundation
import NativeAppSupport
import TestSupport
import Testing
import TokenCtlCLI
import TokenKit
import TokenStoreTesting

/// Every server fault against every command that talks to the server: `login`, `token`,
/// `refresh`, `revoke`, `request` and git's helper. Each case must end with a clear
/// message and its documented exit status, print no token, and leave the stored tokens
/// as they were unless the server definitively rejected them.
///
/// The faults come from the stub server over real HTTP through the real transport, with
/// the transport's timeouts cut to 2 s so a hung server costs 2 s, not 30. With
/// `HARDENING_SUMMARY` set, each case appends "fault<TAB>COMMAND<TAB>FAULT<TAB>pass|fail".
@Suite struct FaultMatrixTests {
  /// Started once, by the first case that asks, without blocking a thread while it starts.
  static let stub = Task { try await StubServer.start() }
  /// An https server whose self-signed certificate nobody trusts.
  static let untrusted = Task {
    try await LoopbackService.start("Tests/Support/tls-server.py", info: "tls-server.json", arguments: [])
  }

  enum Command: String, CaseIterable, Sendable {
    case login, token, refresh, revoke, request, credential
  }

  /// What a fault does to a command whose request is a refresh (token, refresh, request,
  /// credential); the others differ where the protocol says so (see `expected`).
  static let refreshFaults: [String: (status: Int32, phrase: String)] = [
    "refused": (10, "could not connect"),
    "dns": (10, "resolve"),
    "hang": (10, "within"),
    "reset": (10, "127.0.0.1"),
    "500": (11, "HTTP 500"),
    "502": (11, "HTTP 502"),
    "503": (11, "HTTP 503"),
    "503-retry-after": (11, "Try again in 2 s"),
    "html": (11, "HTML page"),
    "502-html": (11, "HTTP 502"),
    "empty": (11, "is empty"),
    "wrong-shape": (11, "no access_token"),
    "wrong-shape-array": (11, "not a JSON object"),
    "invalid-json": (11, "not a JSON object"),
    "oversized": (10, "larger than"),
    "oversized-chunked": (10, "larger than"),
    "invalid_grant": (5, "tokenctl login faulty"),
    "invalid_client": (11, "does not accept this client"),
    "slow_down": (11, "slow_down"),
    "error-200": (11, "bad_verification_code"),
    "reused": (5, "tokenctl login faulty"),
    // Certificate verification is always on: an untrusted server gets nothing.
    "untrusted-certificate": (10, "certificate"),
  ]

  struct Case: Sendable, CustomStringConvertible {
    var command: Command
    var fault: String
    var description: String { "\(command.rawValue) × \(fault)" }
  }

  static let cases: [Case] = Command.allCases.flatMap { command in
    refreshFaults.keys.sorted().compactMap { fault in
      // A reused refresh token needs a refresh; signing in presents none.
      command == .login && fault == "reused" ? nil : Case(command: command, fault: fault)
    }
  }

  /// The status and a phrase of the message `command` must end with under `fault`.
  static func expected(_ command: Command, _ fault: String) -> (status: Int32, phrase: String) {
    let base = refreshFaults[fault]!
    switch command {
    case .revoke:
      // RFC 7009 §2.2: any 200 means revoked, whatever the body. Otherwise the account
      // is kept and the user told the server was not.
      // The stub answers 200 to revoking a spent refresh token, as RFC 7009 §2.2 asks
      // for tokens it no longer knows.
      // An OAuth error sent with 200 contradicts itself; the account is kept, as for any
      // answer that does not say the tokens are gone.
      if ["html", "empty", "wrong-shape", "wrong-shape-array", "invalid-json", "reused"].contains(fault) {
        return (0, "")
      }
      return (15, "the account is kept")
    case .login:
      // The device authorization request is the first one a sign-in makes.
      // No stored grant was presented, so invalid_grant refuses this sign-in only.
      if fault == "invalid_grant" { return (12, "refused the grant") }
      if fault == "slow_down" { return (11, fault) }
      if fault == "wrong-shape" { return (11, "device_code") }
      return base
    default:
      return base
    }
  }

  /// The endpoint URL the fault lives at.
  /// `untrusted`: the base URL of the server with the untrusted certificate.
  static func url(_ fault: String, _ endpoint: String, stub: StubServer, untrusted: String?) -> URL {
    switch fault {
    case "refused": return URL(string: "http://127.0.0.1:1/\(endpoint)")!
    case "dns": return URL(string: "https://tokenctl-test.invalid/\(endpoint)")!
    case "reused": return URL(string: "\(stub.baseURL)/\(endpoint)")!
    case "untrusted-certificate":
      return URL(string: "\(untrusted ?? "https://127.0.0.1:1")/\(endpoint)")!
    default: return URL(string: "\(stub.baseURL)/fault/\(fault)/\(endpoint)")!
    }
  }

  @Test(arguments: cases)
  func aFaultEndsClearlyAndLosesNothing(_ test: Case) async throws {
    let stub = try await Self.stub.value
    var untrusted: String?
    if test.fault == "untrusted-certificate" { untrusted = try? await Self.untrusted.value.baseURL }
    let backing = InMemoryTokenStore.Backing()
    let store = InMemoryTokenStore(group: "default", backing: backing)
    let account = Account(
      type: "faulty", id: "sub-1", name: "ada", group: "default", createdAt: Date(), updatedAt: Date(),
      clientID: "client")
    var refreshToken = "old-refresh-\(UUID())"
    if test.fault == "reused" {
      // A refresh token the rotating server has already spent.
      let family = try await stub.admin("/_admin/issue", method: "POST")
      refreshToken = try #require(family["refresh_token"] as? String)
      _ = try await TestProcess.run(
        "curl",
        ["-s", "-d", "grant_type=refresh_token", "--data-urlencode", "refresh_token@-", "\(stub.baseURL)/token"],
        environment: ProcessInfo.processInfo.environment, stdin: refreshToken)
    }
    let tokens = TokenSet(
      accessToken: "old-access-\(UUID())", refreshToken: refreshToken, expiresAt: Date().addingTimeInterval(-60))
    if test.command != .login { try store.save(account, tokens: tokens) }
    var registry = AccountTypeRegistry()
    try registry.register(
      EndpointDescriptor(
        id: "faulty", displayName: "Faulty",
        endpoints: .fixed(
          Endpoints(
            authorization: nil, token: Self.url(test.fault, "token", stub: stub, untrusted: untrusted),
            deviceAuthorization: Self.url(test.fault, "device_authorization", stub: stub, untrusted: untrusted),
            revocation: Self.url(test.fault, "revoke", stub: stub, untrusted: untrusted))),
        clientID: "client", git: GitIntegration(hosts: ["git.faulty.example"], username: .literal("oauth2")),
        apiBase: URL(string: "https://api.faulty.example")),
      source: "test")
    let output = CapturedOutput()
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-matrix-\(UUID())")
    defer { try? FileManager.default.removeItem(at: scratch) }
    let context = CLIContext(
      registry: registry, makeStore: { InMemoryTokenStore(group: $0, backing: backing) }, clock: SystemClock(),
      environment: ["HOME": scratch.path, "XDG_CACHE_HOME": scratch.path + "/cache"], output: output,
      transport: CurlHTTPTransport(connectTimeout: .seconds(2), totalTimeout: .seconds(2)),
      openBrowser: { _, _ in nil }, readLine: { nil },
      readInput: { _ in Array("protocol=https\nhost=git.faulty.example\n\n".utf8) },
      sleep: { _ in }, terminal: { nil })
    let arguments: [String] =
      switch test.command {
      case .login: ["login", "faulty", "--device", "--timeout", "5"]
      case .token: ["token", "faulty:ada"]
      case .refresh: ["refresh", "faulty:ada"]
      case .revoke: ["revoke", "faulty:ada"]
      case .request: ["request", "faulty:ada", "/v1/me"]
      case .credential: ["credential", "get"]
      }
    let status = await TokenCtl.main(arguments: arguments, context: context)

    let (expectedStatus, phrase) = Self.expected(test.command, test.fault)
    var problems: [String] = []
    if status != expectedStatus { problems.append("exit status \(status), expected \(expectedStatus)") }
    if !phrase.isEmpty, !output.stderr.contains(phrase) { problems.append("no '\(phrase)' in the message") }
    if status != 0 && !output.stderr.hasPrefix("tokenctl") { problems.append("no message") }
    if !output.stdout.isEmpty && test.command != .revoke { problems.append("printed on standard output") }
    if [tokens.accessToken, refreshToken].contains(where: { output.stdout.contains($0) || output.stderr.contains($0) })
    {
      problems.append("a token was printed")
    }
    let after = try store.load(account.key)
    switch test.command {
    case .login:
      if after != nil { problems.append("an account was stored") }
    case .revoke:
      if (after == nil) != (expectedStatus == 0) { problems.append("account removed: \(after == nil)") }
    default:
      if after?.tokens != tokens { problems.append("the stored tokens changed") }
      if after?.account.needsSignIn != (expectedStatus == 5) { problems.append("needs-sign-in mark wrong") }
    }
    #expect(problems.isEmpty, "\(test): \(problems.joined(separator: "; "))\n\(output.stderr)")
    HardeningSummary.record("fault", test.command.rawValue, test.fault, problems.isEmpty ? "pass" : "fail")
  }
}
