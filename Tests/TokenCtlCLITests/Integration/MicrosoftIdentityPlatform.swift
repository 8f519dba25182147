import Foundation
import TestSupport

/// Our stand-in of the Microsoft identity platform v2.0 and Microsoft Graph
/// (`Tests/Support/microsoft-identity-platform.py`), written from Microsoft's documentation
/// and served over HTTPS with a throw-away CA: one per suite, so that each scripts its own
/// faults through the control API; it stops when this test process exits.
struct MicrosoftIdentityPlatform: Sendable {
  /// `https://127.0.0.1:PORT`.
  let baseURL: String
  /// `127.0.0.1:PORT`: what the `graph` type takes as `authority_host` and `graph_host`.
  let host: String
  /// The CA that signs the server's certificate, and nothing else.
  let caFile: String
  let directory: URL
  /// The info file the stand-in published (ids of tenants, clients and users).
  let infoJSON: Data
  var info: [String: Any] { (try? JSONSerialization.jsonObject(with: infoJSON) as? [String: Any]) ?? [:] }

  static let script = "Tests/Support/microsoft-identity-platform.py"

  /// Starts a stand-in (waiting without blocking Swift's cooperative pool).
  static func start(_ arguments: [String] = []) async throws -> MicrosoftIdentityPlatform {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "tokenctl-microsoft-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    _ = try TestProcess(
      AuthServer.path(script),
      ["--state-dir", directory.path, "--watch-pid", String(getpid()), "--lifetime", "900"] + arguments,
      environment: ProcessInfo.processInfo.environment, stderr: directory.appendingPathComponent("stderr").path)
    let file = directory.appendingPathComponent("microsoft-identity-platform.json")
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
      if let data = try? Data(contentsOf: file),
        let info = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
        let base = info["base_url"] as? String, let host = info["host"] as? String,
        let caFile = info["ca_file"] as? String
      {
        return MicrosoftIdentityPlatform(
          baseURL: base, host: host, caFile: caFile, directory: directory, infoJSON: data)
      }
      try await Task.sleep(for: .milliseconds(50))
    }
    let stderr = (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
    throw TestFailure("the Microsoft identity platform stand-in did not start: \(stderr)")
  }

  // MARK: The directory

  func tenantID(_ key: String) -> String {
    ((info["tenants"] as? [String: Any])?[key] as? [String: Any])?["id"] as? String ?? ""
  }

  func client(_ kind: String) -> (id: String, secret: String?) {
    let client = (info["clients"] as? [String: Any])?[kind] as? [String: Any]
    return (client?["client_id"] as? String ?? "", client?["client_secret"] as? String)
  }

  var publicClientID: String { client("public").id }

  // MARK: Control

  /// `POST /_test/control` with `body` (see the script's docstring).
  @discardableResult
  func control(_ body: [String: Any]) async throws -> [String: Any] {
    let data = try JSONSerialization.data(withJSONObject: body)
    let result = try await TestProcess.run(
      "curl",
      [
        "-sS", "--fail-with-body", "--cacert", caFile, "-H", "Content-Type: application/json", "--data-binary",
        "@-", "\(baseURL)/_test/control",
      ], stdin: String(decoding: data, as: UTF8.self))
    guard result.status == 0,
      let answer = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    else { throw TestFailure("the stand-in's control API refused \(body): \(result.stdout) \(result.stderr)") }
    return answer
  }

  /// Every request answered so far, as the stand-in logged it (no secret is in it).
  func requests() throws -> [[String: Any]] {
    try Self.lines(directory.appendingPathComponent("requests.log"))
  }

  /// Every authorization request, with its query.
  func authorizations() throws -> [[String: Any]] {
    try Self.lines(directory.appendingPathComponent("authorize.log"))
  }

  /// The token requests of `grant` so far.
  func tokenRequests(_ grant: String? = nil) throws -> [[String: Any]] {
    try requests().filter { line in
      (line["path"] as? String)?.hasSuffix("/oauth2/v2.0/token") == true
        && (grant == nil || Self.field(line, "grant_type") == grant)
    }
  }

  /// A form or query field of a logged request.
  static func field(_ line: [String: Any], _ name: String) -> String? {
    for key in ["form", "query", "fields"] {
      if let fields = line[key] as? [String: Any], let value = fields[name] { return "\(value)" }
    }
    return line[name].map { "\($0)" }
  }

  private static func lines(_ file: URL) throws -> [[String: Any]] {
    guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
    return try text.split(separator: "\n").map { line in
      guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
        throw TestFailure("a log line is not a JSON object: \(line)")
      }
      return object
    }
  }

  // MARK: A user of it

  /// config.toml's `[types.graph]` table for this stand-in: the built-in type, unmodified
  /// but for its documented settings.
  func graphSettings(tenant: String = "common", clientID: String? = nil, extra: String = "") -> String {
    """
    [types.graph]
    client_id = "\(clientID ?? publicClientID)"
    tenant = "\(tenant)"
    authority_host = "\(host)"
    graph_host = "\(host)"
    \(extra)
    """
  }

  /// The environment of a tokenctl whose browser is the stand-in's scripted user (as
  /// `user` when given; already signed in to Microsoft as `session` when given), trusting
  /// the stand-in's CA through `SSL_CERT_FILE`.
  func environment(
    _ base: [String: String], user: String? = nil, session: String? = nil, log: String
  ) -> [String: String] {
    var environment = base
    environment["SSL_CERT_FILE"] = caFile
    environment["BROWSER"] = AuthServer.path("Tests/Support/microsoft-browser.py")
    environment["MICROSOFT_STANDIN_CA"] = caFile
    environment["MICROSOFT_STANDIN_USER"] = user
    environment["MICROSOFT_STANDIN_SESSION"] = session
    environment["MICROSOFT_STANDIN_LOG"] = log
    environment["DISPLAY"] = ":0"
    return environment
  }
}
