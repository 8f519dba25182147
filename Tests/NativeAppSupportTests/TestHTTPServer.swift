import Foundation
import TestSupport

/// The Python HTTP server of `TestHTTPServerScript`, on 127.0.0.1 and a port of the
/// kernel's choosing, for the duration of one test.
///
/// It also stops by itself when the test process exits or after two minutes.
final class TestHTTPServer: Sendable {
  let port: Int
  private let process: TestProcess
  private let directory: TemporaryDirectory

  /// Starts the server and waits (without holding a thread) until it has told its port.
  init() async throws {
    directory = try TemporaryDirectory()
    let script = directory.path("server.py")
    try TestHTTPServerScript.source.write(toFile: script, atomically: true, encoding: .utf8)
    let output = directory.path("port")
    process = try TestProcess("python3", [script], stdout: output, stderr: directory.path("errors"))
    let giveUp = Date().addingTimeInterval(30)
    while true {
      if let text = try? String(contentsOfFile: output, encoding: .utf8), text.hasSuffix("\n"),
        let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
      {
        self.port = port
        return
      }
      guard Date() < giveUp else {
        process.terminate()
        throw TestFailure("the test HTTP server did not start")
      }
      try? await Task.sleep(for: .milliseconds(20))
    }
  }

  deinit { process.terminate() }

  /// `http://127.0.0.1:PORT` + `path`.
  func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }
}
