import SocketIO

#if canImport(Glibc)
  import Glibc
#endif

/// A connection to the session bus that makes method calls and reads their replies, and
/// nothing else: no signals, no objects, no main loop. Blocking, each exchange within a
/// deadline; closed when released.
///
/// What it is for: a process that only reads the keyring (`tokenctl token`, git's `get`)
/// spent more time loading GIO, its ten libraries and GDBus's worker thread than on the
/// calls (docs/performance.md). Several calls go out in one write (``calls(_:)``), so that reads that
/// do not depend on each other cost one round trip; the first write carries the
/// authentication and `Hello` too, as sd-bus sends them (the specification's `BEGIN`:
/// a client may send it, and messages, before the server's `OK`).
final class DBusWireConnection {
  private let fd: Int32
  /// How long one write of calls and their replies may take.
  private let timeoutMilliseconds: Int32
  private var deadline: Deadline
  private var serial: UInt32 = 0
  /// Bytes read past the last whole message.
  private var pending: [UInt8] = []
  /// Whether the authentication and `Hello` went out and were answered.
  private var ready = false

  /// Connects to `address`; nil when that fails, and the caller goes through GDBus, which
  /// says why.
  init?(_ address: DBusAddress, timeoutMilliseconds: Int32) {
    guard let fd = address.connect() else { return nil }
    self.fd = fd
    self.timeoutMilliseconds = timeoutMilliseconds
    deadline = Deadline(milliseconds: timeoutMilliseconds)
  }

  /// What a connection says before its first message: the credentials byte, `EXTERNAL`
  /// authentication as this process's user (the specification's "Authentication
  /// Protocol": the uid in ASCII decimal, hex-encoded), and `BEGIN`.
  private static func authentication() -> [UInt8] {
    let digits = Array("0123456789abcdef".utf8)
    let uid = Array(String(getuid()).utf8).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }
    return [0] + Array("AUTH EXTERNAL ".utf8) + uid + Array("\r\nBEGIN\r\n".utf8)
  }

  /// The bus's `Hello`, which every client sends first.
  private static var hello: Call {
    Call(
      destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
      member: "Hello")
  }

  deinit { close(fd) }

  /// A method call to make.
  struct Call {
    var destination: String
    var path: String
    var interface: String
    var member: String
    var signature: String = ""
    var arguments: (inout DBusWriter) -> Void = { _ in }
  }

  enum Failure: Error {
    /// The bus closed the connection, or it failed.
    case connection
    case timedOut
    /// A message that does not parse.
    case malformed
  }

  /// Makes `calls` in one write and returns their replies (returns or errors) in the same
  /// order. Signals the bus sends meanwhile (`NameAcquired`) are passed over.
  func calls(_ calls: [Call]) throws(Failure) -> [DBusMessage] {
    deadline = Deadline(milliseconds: timeoutMilliseconds)
    let first = !ready
    var bytes: [UInt8] = first ? Self.authentication() : []
    var serials: [UInt32] = []
    for call in (first ? [Self.hello] : []) + calls {
      serial &+= 1
      serials.append(serial)
      bytes += DBusMessage.call(
        serial: serial, destination: call.destination, path: call.path, interface: call.interface,
        member: call.member, signature: call.signature, body: call.arguments)
    }
    do {
      try SocketIO.write(bytes, to: fd, until: deadline)
    } catch {
      throw error == .timedOut ? .timedOut : .connection
    }
    if first {
      // One line, `OK <server guid>`; `REJECTED` ends here, and the bus closes the
      // connection on what followed.
      guard let line = try readLine(), line.hasPrefix("OK ") else { throw .connection }
    }
    // Serials go up by one, so a reply's place is its serial less the first's.
    var replies = [DBusMessage?](repeating: nil, count: serials.count)
    var missing = serials.count
    while missing > 0 {
      let message = try nextMessage()
      guard let answered = message.replySerial, message.kind == .methodReturn || message.kind == .error else {
        continue
      }
      let place = Int(answered &- serials[0])
      guard place < replies.count, replies[place] == nil else { continue }
      replies[place] = message
      missing -= 1
    }
    var answers = replies.map { $0! }
    if first {
      guard answers.removeFirst().kind == .methodReturn else { throw .connection }
      ready = true
    }
    return answers
  }

  private func nextMessage() throws(Failure) -> DBusMessage {
    while true {
      let length: Int?
      do {
        length = try DBusMessage.length(of: pending[...])
      } catch {
        throw .malformed
      }
      if let length, pending.count >= length {
        let bytes = Array(pending[..<length])
        pending.removeFirst(length)
        do {
          return try DBusMessage(bytes)
        } catch {
          throw .malformed
        }
      }
      guard try receive() else { throw .connection }
    }
  }

  /// Reads what has arrived into `pending`; false at the end of the stream.
  private func receive() throws(Failure) -> Bool {
    do {
      try SocketIO.wait(fd, for: Int16(POLLIN), until: deadline)
    } catch {
      throw error == .timedOut ? .timedOut : .connection
    }
    // Uninitialized: zeroing 64 KiB for each read was a tenth of a read's instructions,
    // and touched pages a reply of a few hundred bytes never fills.
    var count = 0
    let received = [UInt8](unsafeUninitializedCapacity: 64 * 1024) { buffer, initialized in
      repeat {
        count = recv(fd, buffer.baseAddress!, buffer.count, 0)
      } while count < 0 && errno == EINTR
      initialized = max(count, 0)
    }
    guard count > 0 else { return false }
    pending.append(contentsOf: received)
    return true
  }

  /// The authentication server's line, without its CRLF; nil when the connection ends
  /// before one, or sends more than a line.
  private func readLine() throws(Failure) -> String? {
    while true {
      if let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = pending[..<end]
        pending.removeFirst(end + 1)
        return String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
      }
      // A server's line is short; more is not a D-Bus server.
      guard pending.count < 4096, try receive() else { return nil }
    }
  }
}
