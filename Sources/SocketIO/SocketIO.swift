#if canImport(Glibc)
  import Glibc
#else
  import CLinux  // Embedded Swift (the front end) has no Glibc module.
#endif

/// Waiting on and writing to a connected socket within a ``Deadline``, with `poll`: a
/// peer that stops reading or sending costs its waiter a bounded time, never a hang. The
/// one implementation under the agent's protocol (AgentWire) and the keyring's reads
/// without GIO (SecretServiceWire). Blocking: callers run it off Swift's cooperative pool.
public enum SocketIO {
  /// Why a wait or a write ended early.
  public enum Failure: Error, Equatable {
    case timedOut
    /// The socket failed, with this `errno`.
    case failed(Int32)
  }

  /// Returns once `fd` is ready for `events` (`POLLIN`, `POLLOUT`), or throws at the
  /// deadline.
  public static func wait(_ fd: Int32, for events: Int16, until deadline: Deadline) throws(Failure) {
    while true {
      let remaining = deadline.remainingMilliseconds()
      guard remaining > 0 else { throw .timedOut }
      var entry = pollfd(fd: fd, events: events, revents: 0)
      let result = poll(&entry, 1, remaining)
      if result > 0 { return }
      if result == 0 { throw .timedOut }
      if errno != EINTR { throw .failed(errno) }
    }
  }

  /// Writes `bytes` whole. `MSG_NOSIGNAL`: a peer that has gone is an error, not SIGPIPE.
  public static func write(_ bytes: [UInt8], to fd: Int32, until deadline: Deadline) throws(Failure) {
    var written = 0
    while written < bytes.count {
      try wait(fd, for: Int16(POLLOUT), until: deadline)
      let result = bytes.withUnsafeBytes { buffer in
        send(fd, buffer.baseAddress! + written, buffer.count - written, Int32(MSG_NOSIGNAL))
      }
      if result < 0 {
        if errno == EINTR || errno == EAGAIN { continue }
        throw .failed(errno)
      }
      written += result
    }
  }
}
