import Foundation

/// Our own fault-injecting OAuth server (`Tests/Support/stub-oauth-server`), for what a
/// real server will not do on demand: count requests, delay answers, misbehave.
struct StubServer {
  let baseURL: String
  let directory: URL

  /// Starts a stub that stops by itself when this test process exits.
  static func start() throws -> StubServer {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-stub-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    _ = try ProcessRunner.spawn(
      AuthServer.path("Tests/Support/stub-oauth-server"),
      ["--state-dir", directory.path, "--watch-pid", String(getpid()), "--lifetime", "600"],
      environment: ProcessInfo.processInfo.environment)
    let file = directory.appendingPathComponent("stub.json")
    for _ in 0..<200 {
      if let data = try? Data(contentsOf: file),
        let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
        let base = json["base_url"] as? String
      {
        return StubServer(baseURL: base, directory: directory)
      }
      usleep(50_000)
    }
    throw TestSetupError("the stub server did not start")
  }

  /// POSTs or GETs an admin endpoint and returns its JSON object.
  func admin(_ path: String, method: String = "GET") throws -> [String: Any] {
    let result = try ProcessRunner.run(
      "curl", ["-s", "-X", method, baseURL + path], environment: ProcessInfo.processInfo.environment)
    guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
      throw TestSetupError("\(path) answered \(result.stdout)")
    }
    return object
  }
}
