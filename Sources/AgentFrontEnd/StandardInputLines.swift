#if canImport(Glibc)
  import Glibc
#else
  import CLinux  // Embedded Swift (the front end) has no Glibc module.
#endif

/// Standard input read a line at a time, for a protocol of one message per line whose
/// other side waits for each answer before it writes again (cargo's credential providers).
///
/// Reads only what is there: a line is answered as soon as it is complete, never after
/// waiting to fill a buffer. In the front end too, which hands what it read and did not
/// answer to the full program (``FrontEnd/HandOver/cargo(unread:)``).
public struct StandardInputLines {
  /// The longest line taken: a request of a few hundred bytes, with room to spare.
  let limit: Int
  private var buffered: [UInt8] = []
  private var ended = false

  /// `buffered`: what was read from standard input already and not taken (the front end's
  /// hand-over), taken first.
  public init(limit: Int, buffered: [UInt8] = []) {
    self.limit = limit
    self.buffered = buffered
  }

  /// What was read and not taken yet.
  public var unread: [UInt8] { buffered }

  /// The next line without its line break; nil at the end of input, or when a line is
  /// longer than `limit` (what follows it is not read).
  public mutating func next() -> [UInt8]? {
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
        let line = Array(buffered[..<newline])
        buffered.removeSubrange(...newline)
        return line
      }
      if buffered.count > limit { return nil }
      if ended {
        guard !buffered.isEmpty else { return nil }
        defer { buffered = [] }
        return buffered
      }
      let count = chunk.withUnsafeMutableBytes { systemRead(0, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { ended = true } else { buffered += chunk[..<count] }
    }
  }
}
