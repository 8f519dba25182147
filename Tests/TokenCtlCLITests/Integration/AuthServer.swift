import Foundation
import NativeAppSupport
import TestSupport
import Testing
import TokenKit

/// The real authorization server of the tests (django-oauth-toolkit, `Tests/AuthServer`),
/// started once per test process on 127.0.0.1 and stopped by itself when we exit.
struct AuthServer: Sendable {
  let issuer: String
  let baseURL: String
  let nativeClientID: String
  let deviceClientID: String
  let serviceClientID: String
  let serviceClientSecret: String
  let users: [String: String]  // username → password
  /// The server.json the scripted browser reads passwords from.
  let serverJSON: String

  static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  static func path(_ relative: String) -> String { repository.appendingPathComponent(relative).path }

  /// Our environment for a tokenctl whose browser is the scripted user signing in here,
  /// on a display, with its configuration and cache under `scratch` and the browser's log
  /// in `scratch/browser.log`.
  func browserEnvironment(scratch: URL) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment.merging(scriptedBrowser(in: scratch)) { $1 }
    environment["XDG_CACHE_HOME"] = scratch.appendingPathComponent("cache").path
    environment["XDG_CONFIG_HOME"] = scratch.appendingPathComponent("config").path
    environment["TOKENCTL_CONFIG"] = nil
    environment["DISPLAY"] = ":0"
    return environment
  }

  /// The scripted user (Tests/Support/scripted-browser.sh) as tokenctl's browser, signing in
  /// here and logging what it did in `folder/browser.log`: to merge into an environment.
  func scriptedBrowser(in folder: URL) -> [String: String] {
    [
      "BROWSER": Self.path("Tests/Support/scripted-browser.sh"), "SCRIPTED_BROWSER_SERVER_JSON": serverJSON,
      "SCRIPTED_BROWSER_LOG": folder.appendingPathComponent("browser.log").path,
    ]
  }

  /// `GitCredentialTests.environment` for `home` and `group`, without the caller's log
  /// level or config file, and with the scripted user signing in here (its log in
  /// `directory`): what the suites that sign in through a browser start from.
  func signInEnvironment(home: URL, group: String, directory: TemporaryDirectory) -> [String: String] {
    var environment = GitCredentialTests.environment(home: home, group: group)
    environment["TOKENCTL_LOG"] = nil
    environment["TOKENCTL_CONFIG"] = nil
    return environment.merging(scriptedBrowser(in: directory.url)) { $1 }
  }

  // Each server starts on first use and once per test process. Starting one waits for it,
  // so the first use is on a thread of its own (`onOwnThread`): a test's task on Swift's
  // cooperative pool would hold one of its few threads, and every test that asks for the
  // server meanwhile would hold another, waiting for the first.

  /// The server most tests share; the failure (with the reason) when the Python
  /// environment is missing: `make test` installs it.
  static var shared: AuthServer { get async throws { try await onOwnThread { startedShared }.get() } }
  private static let startedShared = start(name: "auth")

  /// A second server whose access tokens live 4 seconds, for what happens when they expire.
  static var shortLived: AuthServer { get async throws { try await onOwnThread { startedShortLived }.get() } }
  private static let startedShortLived = start(name: "auth-short", accessTokenSeconds: 4)

  /// django-oauth-toolkit as it ships (AUTH_SERVER_AS_SHIPPED, Tests/AuthServer/README.md),
  /// with 4-second access tokens: rotating a refresh token deletes the access token issued
  /// beside it, as a real server users have does.
  static var asShipped: AuthServer { get async throws { try await onOwnThread { startedAsShipped }.get() } }
  private static let startedAsShipped = start(name: "auth-shipped", accessTokenSeconds: 4, asShipped: true)

  /// django-oauth-toolkit as it ships, with hour-long access tokens: a rotation deletes an
  /// access token that its expiry would still let tokenctl hand out (GrantJournalFaultTests).
  static var asShippedLongLived: AuthServer {
    get async throws { try await onOwnThread { startedAsShippedLongLived }.get() }
  }
  private static let startedAsShippedLongLived = start(name: "auth-shipped-hour", asShipped: true)

  /// A server of one test's own (GrantLossOnLoginTests): `live()` counts every token it
  /// holds, which only a server no other test signs in to keeps exact.
  static var ownCount: AuthServer { get async throws { try await onOwnThread { startedOwnCount }.get() } }
  private static let startedOwnCount = start(name: "auth-count")

  private static func start(
    name: String, accessTokenSeconds: Int? = nil, asShipped: Bool = false
  ) -> Result<AuthServer, TestFailure> {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-\(name)-\(getpid())")
    try? FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
    var environment = ProcessInfo.processInfo.environment
    if let accessTokenSeconds { environment["AUTH_SERVER_ACCESS_TOKEN_SECONDS"] = String(accessTokenSeconds) }
    if asShipped { environment["AUTH_SERVER_AS_SHIPPED"] = "1" }
    do {
      let result = try TestProcess.run(
        path("Tests/Support/auth-server.sh"), ["start", state.path, "--watch-pid", String(getpid())],
        environment: environment)
      guard result.status == 0 else {
        return .failure(TestFailure("auth-server.sh start failed: \(result.stderr)"))
      }
      let data = try Data(contentsOf: state.appendingPathComponent("server.json"))
      let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
      let clients = json["clients"] as? [String: [String: Any]] ?? [:]
      var users: [String: String] = [:]
      for user in json["users"] as? [[String: Any]] ?? [] {
        users[user["username"] as? String ?? ""] = user["password"] as? String
      }
      return .success(
        AuthServer(
          issuer: json["issuer"] as? String ?? "", baseURL: json["base_url"] as? String ?? "",
          nativeClientID: clients["native"]?["client_id"] as? String ?? "",
          deviceClientID: clients["device"]?["client_id"] as? String ?? "",
          serviceClientID: clients["service"]?["client_id"] as? String ?? "",
          serviceClientSecret: clients["service"]?["client_secret"] as? String ?? "", users: users,
          serverJSON: state.appendingPathComponent("server.json").path))
    } catch {
      return .failure(TestFailure("auth-server.sh: \(error)"))
    }
  }

  /// Writes the user type `id` (tokenctl-types(5)) under `home`'s config: this server as
  /// the issuer, its native client, `scopes`, and the loopback redirect it registers.
  /// `gitHosts`, when given, are the hosts git asks tokenctl about (`[git]`).
  func writeType(id: String, displayName: String, scopes: [String], home: URL, gitHosts: [String] = []) throws {
    try UserTypeFile(
      id: id, displayName: displayName, issuer: issuer, clientID: nativeClientID, scopes: scopes,
      loopbackRedirect: true, gitHosts: gitHosts
    ).write(configHome: home.appendingPathComponent("config"))
  }

  /// What the server says of `token` (RFC 7662), asked as the service client: whether it
  /// is active, and its scopes.
  func introspect(_ token: String) async throws -> (active: Bool, scopes: Set<String>) {
    let data = try Data(contentsOf: URL(fileURLWithPath: serverJSON))
    let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    let endpoint = try #require((json?["endpoints"] as? [String: String])?["introspection"].flatMap(URL.init(string:)))
    let fields = [("token", token), ("client_id", serviceClientID), ("client_secret", serviceClientSecret)]
    let response = try await CurlHTTPTransport().send(.form(endpoint, fields))
    let answer = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
    let scopes = (answer?["scope"] as? String ?? "").split(separator: " ").map(String.init)
    return (answer?["active"] as? Bool ?? false, Set(scopes))
  }

  /// Whether the server issued `token` and still holds it (not revoked, not deleted by a
  /// rotation), with its scopes, expired or not: what a test of a 4-second token can
  /// check without racing the machine's load (the test server's `/_test/issued`).
  func issued(_ token: String) async throws -> (issued: Bool, scopes: Set<String>) {
    let endpoint = try #require(URL(string: "\(baseURL)/_test/issued"))
    let response = try await CurlHTTPTransport().send(.form(endpoint, [("token", token)]))
    let answer = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
    let scopes = (answer?["scope"] as? String ?? "").split(separator: " ").map(String.init)
    return (answer?["issued"] as? Bool ?? false, Set(scopes))
  }

  /// How many access tokens the server still holds and how many refresh tokens are still
  /// good (the test server's `/_test/live`): for a grant whose tokens nobody else knows.
  func live() async throws -> (accessTokens: Int, refreshTokens: Int) {
    let endpoint = try #require(URL(string: "\(baseURL)/_test/live"))
    let response = try await CurlHTTPTransport().send(.form(endpoint, []))
    let answer = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    return (try #require(answer["access_tokens"] as? Int), try #require(answer["refresh_tokens"] as? Int))
  }
}
