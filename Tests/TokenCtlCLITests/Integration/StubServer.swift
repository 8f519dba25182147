import Foundation
import TestSupport

/// Our own fault-injecting OAuth server (`Tests/Support/stub-oauth-server.py`), for what a
/// real server will not do on demand: count requests, delay answers, misbehave.
struct StubServer: Sendable {
  let baseURL: String
  let directory: URL

  /// Starts a stub that stops by itself when this test process exits.
  static func start() async throws -> StubServer {
    let (baseURL, directory) = try await LoopbackService.start(
      "Tests/Support/stub-oauth-server.py", info: "stub.json", arguments: [], lifetime: 600)
    return StubServer(baseURL: baseURL, directory: directory)
  }

  /// POSTs or GETs an admin endpoint and returns its JSON object.
  func admin(_ path: String, method: String = "GET") async throws -> [String: Any] {
    let result = try await TestProcess.run(
      "curl", ["-s", "-X", method, baseURL + path], environment: ProcessInfo.processInfo.environment)
    guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
      throw TestFailure("\(path) answered \(result.stdout)")
    }
    return object
  }
}
