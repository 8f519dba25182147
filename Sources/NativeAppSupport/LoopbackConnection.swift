#if canImport(Glibc)
  import Glibc
#endif

/// One browser connection to the loopback listener: its socket, the bytes of the request
/// head read so far, and how long it may take.
///
/// Used only by the listener's own thread.
final class LoopbackConnection {
  enum Phase {
    /// Waiting for the request head.
    case reading
    /// Answered; reading whatever the client still sends until it closes, so that closing
    /// with unread data does not reset the connection and lose the answer (RFC 9112 §9.6).
    case draining
  }

  /// How far the client has come with its request, for choosing which connection gives
  /// way when every slot is taken: the earlier the stage, the less is lost by closing it.
  enum Stage: Comparable {
    /// No complete request line yet: a spare connection, or one held open to take a slot.
    case silent
    /// A request line without the rest of the head, which a browser sends at once.
    case partialHead
    /// Answered; only waiting for the client to close.
    case answered
    /// A whole head (or more than a head may hold) is here, to be answered next.
    case complete
  }

  /// What reading brought.
  enum Progress {
    case waiting
    case head(LoopbackRequest?)
    case tooLarge
    case closed
  }

  let socket: Int32
  private(set) var phase = Phase.reading
  /// When the connection is closed unless it has moved on: the first bytes' deadline,
  /// then the head's, then the end of draining.
  private(set) var deadline: ContinuousClock.Instant
  private let headDeadline: ContinuousClock.Instant
  private var buffer: [UInt8] = []
  private var closed = false

  init(socket: Int32, firstBytesBy: ContinuousClock.Instant, headBy: ContinuousClock.Instant) {
    self.socket = socket
    deadline = firstBytesBy
    headDeadline = headBy
  }

  /// Reads what has arrived, up to one byte past `limit`.
  func read(limit: Int) -> Progress {
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let wanted = phase == .draining ? chunk.count : min(chunk.count, limit + 1 - buffer.count)
      let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, wanted, 0) }
      if count < 0 {
        if errno == EINTR { continue }
        return errno == EAGAIN || errno == EWOULDBLOCK ? .waiting : .closed
      }
      if count == 0 { return .closed }
      guard phase == .reading else { continue }
      if buffer.isEmpty { deadline = headDeadline }
      buffer += chunk[..<count]
      if let end = LoopbackRequest.endOfHead(in: buffer) { return .head(LoopbackRequest(head: buffer[..<end])) }
      if buffer.count > limit { return .tooLarge }
    }
  }

  /// The stage of the request, counting bytes that have arrived but not been read: a
  /// browser's request may be waiting in the kernel while other connections are accepted.
  func stage(limit: Int) -> Stage {
    guard phase == .reading else { return .answered }
    var pending = [UInt8](repeating: 0, count: max(0, limit + 1 - buffer.count))
    let count = pending.withUnsafeMutableBytes {
      recv(socket, $0.baseAddress, $0.count, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
    }
    let bytes = buffer + pending.prefix(max(0, count))
    if bytes.count > limit || LoopbackRequest.endOfHead(in: bytes) != nil { return .complete }
    return bytes.contains(0x0A) ? .partialHead : .silent
  }

  /// Sends `response`, waiting at most `timeout` for the client to take it, then half-closes
  /// and starts draining until `lingering` from now.
  func answer(_ response: [UInt8], timeout: Duration, lingering: Duration) {
    let giveUp = ContinuousClock.now + timeout
    var sent = 0
    while sent < response.count {
      let count = response.withUnsafeBytes {
        // MSG_NOSIGNAL: a browser that already left must not kill us with SIGPIPE.
        send(socket, $0.baseAddress! + sent, response.count - sent, Int32(MSG_NOSIGNAL))
      }
      if count > 0 {
        sent += count
      } else if count < 0 && errno == EINTR {
        continue
      } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
        let remaining = giveUp - .now
        guard remaining > .zero else { break }
        var descriptor = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
        _ = poll(&descriptor, 1, Int32(clamping: remaining.millisecondsRoundedUp))
      } else {
        break
      }
    }
    shutdown(socket, Int32(SHUT_WR))
    buffer = []
    phase = .draining
    deadline = .now + lingering
  }

  /// Drains until the client closes or `deadline` passes; for the last answer, which ends
  /// the listener, so there is no loop left to do it.
  func lingerThenClose() {
    while phase == .draining {
      let remaining = deadline - .now
      guard remaining > .zero else { break }
      var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
      let ready = poll(&descriptor, 1, Int32(clamping: remaining.millisecondsRoundedUp))
      if ready < 0 && errno == EINTR { continue }
      guard ready > 0, case .waiting = read(limit: 0) else { break }
    }
    close()
  }

  /// Closes the socket once: closing a descriptor number twice could close one another
  /// thread has opened since.
  func close() {
    guard !closed else { return }
    closed = true
    _ = Glibc.close(socket)
  }
}
