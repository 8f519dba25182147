import Foundation
import TestSupport

/// glewlwyd (Debian's package), the tests' server for OAuth dynamic client registration
/// (RFC 7591, RFC 7592): started once per test process on 127.0.0.1 by
/// `Tests/Support/glewlwyd-server.py`, and stopped by itself when we exit. Anyone may register
/// a client there; the user `ada` signs in through `Tests/Support/glewlwyd-browser.py`.
struct GlewlwydServer: Sendable {
  let issuer: String
  let baseURL: String
  let registrationEndpoint: String
  let tokenEndpoint: String
  let userinfoEndpoint: String
  let user: String
  let password: String
  /// The server.json the scripted browser reads the password from.
  let serverJSON: String
  /// glewlwyd's log (its INFO lines, with client ids and user names but no secrets).
  let log: String

  /// Our environment for a tokenctl whose browser is the scripted user signing in here,
  /// on a display, with its configuration and cache under `scratch` and the browser's log
  /// in `scratch/browser.log`.
  func browserEnvironment(scratch: URL) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["BROWSER"] = AuthServer.path("Tests/Support/glewlwyd-browser.py")
    environment["GLEWLWYD_BROWSER_SERVER_JSON"] = serverJSON
    environment["GLEWLWYD_BROWSER_LOG"] = scratch.appendingPathComponent("browser.log").path
    environment["XDG_CACHE_HOME"] = scratch.appendingPathComponent("cache").path
    environment["XDG_CONFIG_HOME"] = scratch.appendingPathComponent("config").path
    environment["TOKENCTL_CONFIG"] = nil
    environment["DISPLAY"] = ":0"
    return environment
  }

  /// The server most tests share; the failure (with the server's own message) when glewlwyd
  /// is not installed or does not start: `make deps` installs it. Started on first use, on a
  /// thread of its own, as `AuthServer.shared` is.
  static var shared: GlewlwydServer { get async throws { try await onOwnThread { startedShared }.get() } }
  private static let startedShared = start("tokenctl-glewlwyd")

  /// A second server with the device authorization grant on (RFC 8628), whose registration
  /// refuses a client that asks for the grant by its standard name.
  static var withDeviceGrant: GlewlwydServer {
    get async throws { try await onOwnThread { startedWithDeviceGrant }.get() }
  }
  private static let startedWithDeviceGrant = start(
    "tokenctl-glewlwyd-device", environment: ["GLEWLWYD_DEVICE_ENABLED": "1"])

  /// Starts a server with its state in the temporary directory `name`-PID.
  private static func start(_ name: String, environment: [String: String] = [:]) -> Result<GlewlwydServer, TestFailure>
  {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())")
    do {
      let result = try TestProcess.run(
        AuthServer.path("Tests/Support/glewlwyd-server.py"), ["start", state.path, "--watch-pid", String(getpid())],
        environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
      guard result.status == 0 else {
        return .failure(TestFailure("glewlwyd-server.py start failed: \(result.stderr)"))
      }
      let data = try Data(contentsOf: state.appendingPathComponent("server.json"))
      let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
      let endpoints = json["endpoints"] as? [String: Any] ?? [:]
      let users = json["users"] as? [[String: Any]] ?? []
      guard let ada = users.first(where: { $0["username"] as? String == "ada" }),
        let password = ada["password"] as? String
      else { return .failure(TestFailure("glewlwyd-server.py: no user ada in server.json")) }
      return .success(
        GlewlwydServer(
          issuer: json["issuer"] as? String ?? "", baseURL: json["base_url"] as? String ?? "",
          registrationEndpoint: endpoints["registration"] as? String ?? "",
          tokenEndpoint: endpoints["token"] as? String ?? "", userinfoEndpoint: endpoints["userinfo"] as? String ?? "",
          user: "ada", password: password, serverJSON: state.appendingPathComponent("server.json").path,
          log: json["log"] as? String ?? ""))
    } catch {
      return .failure(TestFailure("glewlwyd-server.py: \(error)"))
    }
  }
}
