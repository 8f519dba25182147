import Foundation

/// A TCP socket on 127.0.0.1 that the transport tests point at, standing for servers that
/// misbehave: bound but not listening (connections are refused), or listening but never
/// accepting (the kernel completes the handshake and nothing ever answers).
final class LoopbackSocket: Sendable {
  let port: Int
  private let socket: Int32

  init(listening: Bool) throws {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard socket >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, !listening || listen(socket, 8) == 0 else {
      Glibc.close(socket)
      throw TestFailure("bind/listen: \(String(cString: strerror(errno)))")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
    }
    port = Int(UInt16(bigEndian: address.sin_port))
    self.socket = socket
  }

  deinit { Glibc.close(socket) }
}
