import AgentProtocol
import CLinux
import SocketIO

#if canImport(Glibc)
  import Glibc
#endif

/// A client's request, with the process that wrote it: the one whose programs consent
/// and the audit log judge.
///
/// Why not the process that connected (SO_PEERCRED): a connection is a descriptor, and
/// descriptors are inherited. A program allowed nothing could connect, fork a child that
/// keeps the connection, and exec a program that is allowed: SO_PEERCRED would still name
/// the opener's pid, whose `/proc` entry now shows the allowed program, while the child
/// sends the request. The listener passes credentials (``AgentListener``), so the kernel
/// attaches the writer's own pid to the bytes it wrote, and a same-user process cannot
/// claim another's pid. A request written by more than one process is refused: no one
/// program stands behind it.
struct SentRequest {
  var message: AgentMessage
  /// The pid of the process that wrote the request; nil when the kernel attached none
  /// (the listener could not pass credentials), and the caller falls back to the peer's.
  var sender: pid_t?

  /// Reads one request of at most `limit` payload bytes, whole, within `timeoutMilliseconds`.
  static func read(from fd: Int32, limit: Int, timeoutMilliseconds: Int32) throws(AgentProtocolError) -> SentRequest {
    let deadline = Deadline(milliseconds: timeoutMilliseconds)
    var senders = Senders()
    let header = try readBytes(fd, count: 4, deadline: deadline, senders: &senders)
    let length = AgentMessage.payloadLength(header)
    guard length <= limit else { throw .tooLarge(length) }
    let payload = try readBytes(fd, count: length, deadline: deadline, senders: &senders)
    return SentRequest(message: try AgentMessage(payload: payload), sender: try senders.one())
  }

  /// The pids seen on one request's bytes.
  private struct Senders {
    var pids: Set<pid_t> = []
    var unnamed = false

    mutating func saw(_ pid: Int32) {
      if pid > 0 { pids.insert(pid) } else { unnamed = true }
    }

    func one() throws(AgentProtocolError) -> pid_t? {
      guard pids.count <= 1, !(unnamed && !pids.isEmpty) else {
        throw .malformed("the request was written by more than one process")
      }
      return pids.first
    }
  }

  private static func readBytes(
    _ fd: Int32, count: Int, deadline: Deadline, senders: inout Senders
  ) throws(AgentProtocolError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var filled = 0
    while filled < count {
      try AgentSocketIO.waitReadable(fd, until: deadline)
      var pid: Int32 = 0
      let result = bytes.withUnsafeMutableBytes { buffer in
        tokenctl_recv_with_sender(fd, buffer.baseAddress! + filled, count - filled, &pid)
      }
      if result < 0 {
        if errno == EINTR || errno == EAGAIN { continue }
        throw .connection(errno)
      }
      if result == 0 { throw .connection(0) }
      senders.saw(pid)
      filled += result
    }
    return bytes
  }
}
