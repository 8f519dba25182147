import Foundation
import TestSupport

/// A TCP socket on a loopback address that tests point at, standing for servers that
/// misbehave: bound but not listening (connections are refused), or listening but never
/// accepting (the kernel completes the handshake and nothing ever answers); or for another
/// program trying to take a port.
final class LoopbackSocket: Sendable {
  /// Why binding failed.
  struct BindFailure: Error, Equatable {
    var errno: Int32
  }

  let port: Int
  private let socket: Int32

  /// Binds `address`:`port` (a port of the kernel's choosing when 0).
  ///
  /// - Parameter reusingAddress: sets `SO_REUSEADDR` first, as a program trying hardest
  ///   to share a port would.
  /// - Throws: `BindFailure` when the address cannot be bound or listened on.
  init(address: String = "127.0.0.1", port: Int = 0, listening: Bool, reusingAddress: Bool = false) throws {
    let target = SocketAddress(address, port: port)
    let socket = Glibc.socket(target.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard socket >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
    var on: Int32 = 1
    if target.family == AF_INET6 {
      _ = setsockopt(socket, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
    }
    if reusingAddress {
      _ = setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    }
    guard target.withSockaddr({ bind(socket, $0, $1) }) == 0, !listening || listen(socket, 8) == 0 else {
      let number = errno
      Glibc.close(socket)
      throw BindFailure(errno: number)
    }
    var bound = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    _ = withUnsafeMutablePointer(to: &bound) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
    }
    // sin_port and sin6_port share their offset.
    let offset = MemoryLayout<sockaddr_in>.offset(of: \.sin_port)!
    let networkPort = withUnsafeBytes(of: &bound) { $0.load(fromByteOffset: offset, as: UInt16.self) }
    self.port = Int(UInt16(bigEndian: networkPort))
    self.socket = socket
  }

  deinit { Glibc.close(socket) }
}
