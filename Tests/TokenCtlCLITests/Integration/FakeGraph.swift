import Foundation
import TestSupport

/// Our fake Microsoft Graph and token endpoint (`Tests/Support/fake-graph.py`), one per test
/// so each test scripts its own faults; it stops when this test process exits.
struct FakeGraph {
  let baseURL: String
  let directory: URL

  /// A logged request: method, path, decoded query and the status answered.
  struct Request {
    var method: String
    var path: String
    var query: [String: String]
    var status: Int
  }

  static func start(_ arguments: [String] = []) async throws -> FakeGraph {
    let (baseURL, directory) = try await LoopbackService.start(
      "Tests/Support/fake-graph.py", info: "fake-graph.json", arguments: arguments)
    return FakeGraph(baseURL: baseURL, directory: directory)
  }

  /// Every request answered so far, in order.
  func requests() throws -> [Request] {
    let log = directory.appendingPathComponent("requests.log")
    guard let text = try? String(contentsOf: log, encoding: .utf8) else { return [] }
    return try text.split(separator: "\n").map { line in
      guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
        throw TestFailure("a log line is not a JSON object: \(line)")
      }
      return Request(
        method: object["method"] as? String ?? "", path: object["path"] as? String ?? "",
        query: object["query"] as? [String: String] ?? [:], status: object["status"] as? Int ?? 0)
    }
  }
}
