import Foundation
import TestSupport

/// Starts one of the test services under `Tests/Support` (they share
/// `loopback_service.py`): each listens on 127.0.0.1, publishes its address in a JSON file
/// in a directory of its own, and stops by itself when this test process exits.
enum LoopbackService {
  /// Starts `script` with `--state-dir` and `--watch-pid` before `arguments`, and waits
  /// up to 10 s for it to publish `info`; returns its base URL and state directory.
  static func start(
    _ script: String, info: String, arguments: [String], lifetime: Int = 300
  ) throws -> (baseURL: String, directory: URL) {
    let name = URL(fileURLWithPath: script).lastPathComponent
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "tokenctl-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    _ = try TestProcess(
      AuthServer.path(script),
      ["--state-dir", directory.path, "--watch-pid", String(getpid()), "--lifetime", String(lifetime)] + arguments,
      environment: ProcessInfo.processInfo.environment)
    let file = directory.appendingPathComponent(info)
    for _ in 0..<200 {
      if let data = try? Data(contentsOf: file),
        let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
        let base = json["base_url"] as? String
      {
        return (base, directory)
      }
      usleep(50_000)
    }
    throw TestFailure("\(name) did not start")
  }
}
