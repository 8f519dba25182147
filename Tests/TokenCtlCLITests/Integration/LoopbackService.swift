import Foundation
import TestSupport

/// Starts one of the test services under `Tests/Support` (they share
/// `loopback_service.py`): each listens on 127.0.0.1, publishes its address in a JSON file
/// in a directory of its own, and stops by itself when this test process exits.
enum LoopbackService {
  /// Starts `script` with `--state-dir` and `--watch-pid` before `arguments`, and waits
  /// up to 60 s (it takes a second, more on a busy machine) for it to publish `info`;
  /// returns its base URL and state directory.
  static func start(
    _ script: String, info: String, arguments: [String], lifetime: Int = 300
  ) async throws -> (baseURL: String, directory: URL) {
    let (directory, file) = try launch(script, info: info, arguments: arguments, lifetime: lifetime)
    for _ in 0..<1200 {
      if let base = baseURL(in: file) { return (base, directory) }
      try await Task.sleep(for: .milliseconds(50))
    }
    throw TestFailure("\(script) did not start")
  }

  /// Starts the service; returns its state directory and the file it will publish.
  private static func launch(
    _ script: String, info: String, arguments: [String], lifetime: Int
  ) throws -> (directory: URL, file: URL) {
    let name = URL(fileURLWithPath: script).lastPathComponent
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "tokenctl-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    _ = try TestProcess(
      AuthServer.path(script),
      ["--state-dir", directory.path, "--watch-pid", String(getpid()), "--lifetime", String(lifetime)] + arguments,
      environment: ProcessInfo.processInfo.environment)
    return (directory, directory.appendingPathComponent(info))
  }

  /// The base URL the service published in `file`, once it has.
  private static func baseURL(in file: URL) -> String? {
    guard let data = try? Data(contentsOf: file),
      let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return nil }
    return json["base_url"] as? String
  }
}
