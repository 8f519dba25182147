import Foundation

/// A fresh directory under the system's temporary directory, removed when the value is
/// released.
public final class TemporaryDirectory: Sendable {
  public let url: URL

  public init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(at: url) }

  public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// Writes an executable shell script named `name` and returns its path (see
  /// `TestProcess.installScript` for why it is not simply written).
  @discardableResult
  public func script(_ name: String, _ body: String) async throws -> String {
    let path = path(name)
    try await TestProcess.installScript(body, at: path, mode: "0755")
    return path
  }
}
