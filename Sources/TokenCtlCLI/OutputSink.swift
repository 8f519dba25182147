#if canImport(Glibc)
  import Glibc
#endif

/// Where commands write: standard output for results, standard error for messages.
public protocol OutputSink: Sendable {
  func write(_ text: String)
  func writeError(_ text: String)
  /// Writes bytes to standard output as they are: `tokenctl request` prints response
  /// bodies, which need not be UTF-8.
  func write(bytes: [UInt8])
  /// Whether results go to a terminal, which decides styling.
  var isTerminal: Bool { get }
  /// Whether messages go to a terminal, which decides whether a progress line may be
  /// rewritten in place (`\r` and an erase): never into a file or a pipe.
  var errorIsTerminal: Bool { get }
}

extension OutputSink {
  /// A sink whose two streams go to the same place.
  public var errorIsTerminal: Bool { isTerminal }
  /// Sinks that keep text (tests) take the bytes as UTF-8, invalid sequences replaced.
  public func write(bytes: [UInt8]) { write(String(decoding: bytes, as: UTF8.self)) }
}

/// The process's standard output and error.
public struct StandardOutput: OutputSink {
  public init() {}
  public func write(_ text: String) { Self.write(Array(text.utf8), to: STDOUT_FILENO) }
  public func writeError(_ text: String) { Self.write(Array(text.utf8), to: STDERR_FILENO) }
  public func write(bytes: [UInt8]) { Self.write(bytes, to: STDOUT_FILENO) }
  public var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
  public var errorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

  private static func write(_ bytes: [UInt8], to descriptor: Int32) {
    var bytes = bytes[...]
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
