import CLinux
#if !hasFeature(Embedded)
  // Embedded, the front end is one module of these sources (Sources/tokenctl-front-end).
  import SocketIO
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// Reading and writing whole frames on a connected socket, each within a deadline
/// (SocketIO's waits): a peer that stops sending or reading costs its waiter a bounded
/// time, never a hang. Blocking: callers run it off Swift's cooperative pool.
public enum AgentSocketIO {
  /// Reads one frame of at most `limit` payload bytes.
  public static func readMessage(
    from fd: Int32, limit: Int, timeoutMilliseconds: Int32
  ) throws(AgentProtocolError)
    -> AgentMessage
  {
    try readMessage(from: fd, limit: limit, until: Deadline(milliseconds: timeoutMilliseconds))
  }

  /// Reads one frame of at most `limit` payload bytes, whole, by `deadline`.
  public static func readMessage(
    from fd: Int32, limit: Int, until deadline: Deadline
  ) throws(AgentProtocolError)
    -> AgentMessage
  {
    let header = try read(fd, count: 4, deadline: deadline)
    let length = AgentMessage.payloadLength(header)
    guard length <= limit else { throw .tooLarge(length) }
    return try AgentMessage(payload: try read(fd, count: length, deadline: deadline))
  }

  /// Writes `message` whole.
  public static func writeMessage(
    _ message: AgentMessage, to fd: Int32, timeoutMilliseconds: Int32
  )
    throws(AgentProtocolError)
  {
    try writeMessage(message, to: fd, until: Deadline(milliseconds: timeoutMilliseconds))
  }

  /// Writes `message` whole by `deadline`.
  public static func writeMessage(
    _ message: AgentMessage, to fd: Int32, until deadline: Deadline
  )
    throws(AgentProtocolError)
  {
    do {
      try SocketIO.write(message.framed(), to: fd, until: deadline)
    } catch {
      throw AgentProtocolError(error)
    }
  }

  private static func read(_ fd: Int32, count: Int, deadline: Deadline) throws(AgentProtocolError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var filled = 0
    while filled < count {
      try wait(fd, for: Int16(POLLIN), deadline: deadline)
      let result = bytes.withUnsafeMutableBytes { buffer in
        recv(fd, buffer.baseAddress! + filled, count - filled, 0)
      }
      if result < 0 {
        if errno == EINTR || errno == EAGAIN { continue }
        throw .connection(errno)
      }
      if result == 0 { throw .connection(0) }
      filled += result
    }
    return bytes
  }

  /// Returns once `fd` has something to read, or throws at `deadline`.
  public static func waitReadable(_ fd: Int32, until deadline: Deadline) throws(AgentProtocolError) {
    try wait(fd, for: Int16(POLLIN), deadline: deadline)
  }

  private static func wait(_ fd: Int32, for events: Int16, deadline: Deadline) throws(AgentProtocolError) {
    do {
      try SocketIO.wait(fd, for: events, until: deadline)
    } catch {
      throw AgentProtocolError(error)
    }
  }

  /// The uid of the process at the other end of a UNIX socket (SO_PEERCRED), or nil.
  public static func peerUID(_ fd: Int32) -> uid_t? {
    var uid: UInt32 = 0
    var pid: Int32 = 0
    return tokenctl_peer_credentials(fd, &uid, &pid) == 0 ? uid : nil
  }

  /// The pid of the process at the other end of a UNIX socket (SO_PEERCRED), or nil.
  public static func peerPID(_ fd: Int32) -> pid_t? {
    var uid: UInt32 = 0
    var pid: Int32 = 0
    return tokenctl_peer_credentials(fd, &uid, &pid) == 0 ? pid : nil
  }

  /// `path` as a `sockaddr_un`, or nil when it does not fit (108 bytes with its NUL).
  public static func address(_ path: String) -> sockaddr_un? {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
      buffer.copyBytes(from: bytes)
      buffer[bytes.count] = 0
    }
    return address
  }
}
