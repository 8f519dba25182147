#if canImport(Glibc)
  import Glibc
#else
  import CLinux  // Embedded Swift (the front end) has no Glibc module.
#endif

/// Reads what a parent process pipes to standard input, with a bound.
public enum StandardInput {
  /// Reads up to the end of input, a blank line, or `limit` bytes, whichever comes first.
  ///
  /// Stopping at a blank line lets a person type a git credential request by hand; the
  /// bound keeps a runaway writer from filling memory (the caller sees more than its
  /// own limit and refuses the input).
  @Sendable public static func readMessage(limit: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while bytes.count <= limit {
      let count = chunk.withUnsafeMutableBytes { systemRead(0, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      bytes += chunk[..<count]
      if bytes.first == UInt8(ascii: "\n") || bytes.suffix(2) == [10, 10] { break }
    }
    return bytes
  }
}
