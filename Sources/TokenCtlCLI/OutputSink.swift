#if canImport(Glibc)
  import Glibc
#endif

/// Where commands write: standard output for results, standard error for messages.
public protocol OutputSink: Sendable {
  func write(_ text: String)
  func writeError(_ text: String)
  /// Whether results go to a terminal, which decides styling.
  var isTerminal: Bool { get }
}

/// The process's standard output and error.
public struct StandardOutput: OutputSink {
  public init() {}
  public func write(_ text: String) { Self.write(text, to: STDOUT_FILENO) }
  public func writeError(_ text: String) { Self.write(text, to: STDERR_FILENO) }
  public var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

  private static func write(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
      let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
      if written < 0 {
        if errno == EINTR { continue }
        return  // A closed pipe (`tokenctl list | head`) is not our error to report.
      }
      bytes = bytes.dropFirst(written)
    }
  }
}
