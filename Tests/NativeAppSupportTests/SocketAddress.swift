import Foundation

/// A numeric IPv4 or IPv6 address with a port, in the form the socket calls take.
struct SocketAddress {
  /// `AF_INET` or `AF_INET6`.
  let family: Int32
  private let bytes: [UInt8]

  /// `address` is an IP literal without brackets: `127.0.0.1`, `::1`.
  init(_ address: String, port: Int) {
    if address.contains(":") {
      var ipv6 = sockaddr_in6()
      ipv6.sin6_family = sa_family_t(AF_INET6)
      ipv6.sin6_port = UInt16(port).bigEndian
      inet_pton(AF_INET6, address, &ipv6.sin6_addr)
      family = AF_INET6
      bytes = withUnsafeBytes(of: &ipv6) { Array($0) }
    } else {
      var ipv4 = sockaddr_in()
      ipv4.sin_family = sa_family_t(AF_INET)
      ipv4.sin_port = UInt16(port).bigEndian
      inet_pton(AF_INET, address, &ipv4.sin_addr)
      family = AF_INET
      bytes = withUnsafeBytes(of: &ipv4) { Array($0) }
    }
  }

  /// Calls `body` with the address as a `sockaddr` and its length.
  func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
    bytes.withUnsafeBytes { raw in
      body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
    }
  }

  /// Whether this machine can bind ::1 (it has IPv6, and the loopback has its address).
  static let isIPv6LoopbackAvailable: Bool = {
    let socket = Glibc.socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard socket >= 0 else { return false }
    defer { close(socket) }
    return SocketAddress("::1", port: 0).withSockaddr { bind(socket, $0, $1) } == 0
  }()
}
