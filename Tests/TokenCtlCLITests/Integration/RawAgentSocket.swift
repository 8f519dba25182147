import Foundation
import TestSupport

/// A connection to the agent's socket that sends exactly the bytes a test gives, however
/// wrong, and reads whatever comes back: the protocol's own client cannot send a bad frame.
enum RawAgentSocket {
  /// What the agent did with the bytes.
  enum Reply: Equatable, CustomStringConvertible {
    /// A frame came back; its header line (`tokenctl-agent/1 KIND`) and the fields' text.
    case frame(header: String, body: String)
    /// The connection closed (or was reset) with no frame; `bytes` came before the close.
    case closed(bytes: Int)
    /// Nothing came back and nothing closed within the limit.
    case silent

    var description: String {
      switch self {
      case .frame(let header, let body): "frame '\(header)' \(body.debugDescription)"
      case .closed(let bytes): "closed after \(bytes) bytes"
      case .silent: "silent"
      }
    }
  }

  /// A new connection to the socket at `path`.
  static func connect(_ path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
      let path = Array(path.utf8)
      buffer.copyBytes(from: path)
      buffer[path.count] = 0
    }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard connected == 0 else {
      close(fd)
      throw TestFailure("connect \(path): \(String(cString: strerror(errno)))")
    }
    return fd
  }

  /// `message` framed as the protocol frames it: a four-byte big-endian length, then the
  /// payload.
  static func frame(_ payload: [UInt8]) -> [UInt8] {
    let count = UInt32(payload.count)
    return [UInt8(count >> 24), UInt8((count >> 16) & 255), UInt8((count >> 8) & 255), UInt8(count & 255)] + payload
  }

  /// Connects to `path`, sends `bytes` (as far as the agent takes them), half-closes when
  /// `halfClose`, and reads until the agent closes or `seconds` pass.
  static func exchange(path: String, bytes: [UInt8], halfClose: Bool = true, seconds: Double = 15) throws -> Reply {
    let (received, closed) = try transfer(path: path, bytes: bytes, halfClose: halfClose, seconds: seconds)
    return received.isEmpty && !closed ? .silent : decode(received)
  }

  /// Every frame the agent wrote before it closed, in order (`working`, then the answer).
  static func frames(path: String, bytes: [UInt8], seconds: Double = 15) throws -> [Reply] {
    var received = try transfer(path: path, bytes: bytes, halfClose: true, seconds: seconds).bytes[...]
    var frames: [Reply] = []
    while received.count >= 4 {
      let length = received.prefix(4).reduce(0) { $0 << 8 | Int($1) }
      guard received.count >= 4 + length else { break }
      frames.append(decode(Array(received.prefix(4 + length))))
      received = received.dropFirst(4 + length)
    }
    return frames
  }

  /// The bytes the agent wrote until it closed (`closed`) or `seconds` passed.
  private static func transfer(
    path: String, bytes: [UInt8], halfClose: Bool, seconds: Double
  ) throws -> (bytes: [UInt8], closed: Bool) {
    let fd = try connect(path)
    defer { close(fd) }
    let deadline = Date().addingTimeInterval(seconds)
    var sent = 0
    // Non-blocking sends: an agent that refuses after the length stops reading, and the
    // rest of a large frame would block forever in a full socket buffer.
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    sending: while sent < bytes.count, Date() < deadline {
      var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
      guard poll(&entry, 1, 100) > 0 else { continue }
      if entry.revents & Int16(POLLOUT) == 0 { break sending }
      let result = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
      if result < 0 {
        if errno == EAGAIN || errno == EINTR { continue }
        break sending
      }
      sent += result
    }
    if halfClose { shutdown(fd, Int32(SHUT_WR)) }
    var received: [UInt8] = []
    while Date() < deadline {
      var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let ready = poll(&entry, 1, 100)
      if ready <= 0 { continue }
      var buffer = [UInt8](repeating: 0, count: 65536)
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
      if count <= 0 { return (received, true) }
      received += buffer[0..<count]
    }
    return (received, false)
  }

  private static func decode(_ bytes: [UInt8]) -> Reply {
    guard bytes.count >= 4 else { return .closed(bytes: bytes.count) }
    let length = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
    guard bytes.count >= 4 + length else { return .closed(bytes: bytes.count) }
    let text = String(decoding: bytes[4..<(4 + length)], as: UTF8.self)
    let header = String(text.prefix { $0 != "\n" })
    return .frame(header: header, body: String(text.dropFirst(header.count + 1)))
  }
}
