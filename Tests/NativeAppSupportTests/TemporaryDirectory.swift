import Foundation

/// A fresh directory under the system's temporary directory, removed when the value is
/// released.
final class TemporaryDirectory: Sendable {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-native-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(at: url) }

  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// Writes an executable shell script named `name` and returns its path.
  ///
  /// `install` creates it, in a process of its own: were it written here, a child that
  /// another test spawns meanwhile could inherit the file open for writing, and running
  /// the script would then fail with ETXTBSY.
  @discardableResult
  func script(_ name: String, _ body: String) async throws -> String {
    let path = path(name)
    let source = path + ".source"
    try ("#!/bin/sh\n" + body).write(toFile: source, atomically: false, encoding: .utf8)
    guard try await ChildProcess("/usr/bin/install", ["-m", "0755", source, path]).exitStatus() == 0 else {
      throw TestFailure("cannot install \(path)")
    }
    return path
  }
}
