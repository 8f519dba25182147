import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The listening sockets of the loopback listener: 127.0.0.1, and for a `localhost`
/// redirect ::1 on the same port as well.
///
/// A browser may resolve `localhost` to ::1 as readily as to 127.0.0.1. Were ::1 left
/// unbound, any local program could bind [::1]:PORT and receive the code and state
/// meant for us. Holding both addresses leaves nothing on that port for it to take. The
/// v6 socket is `IPV6_V6ONLY`, so that it claims ::1 alone and never the v4 addresses.
///
/// On a machine without IPv6 nobody can bind ::1 either, and a browser cannot reach it:
/// 127.0.0.1 alone is then enough, and the listener says so through its log.
struct LoopbackListeningSockets {
  /// The listening sockets, non-blocking and close-on-exec: 127.0.0.1's first.
  let descriptors: [Int32]
  /// The port, the same on each address.
  let port: UInt16

  /// How often a kernel-chosen 127.0.0.1 port is given up and another one tried because
  /// ::1 is taken on it. A collision is a matter of chance, or of a program squatting
  /// ports, and a second try almost always succeeds; a bound keeps a squatter that holds
  /// every port from making us loop forever.
  static let portAttempts = 8

  /// Browsers open a handful of connections; the queue is as long as the system allows
  /// nonetheless, so that a burst of connections from another program does not make the
  /// kernel drop the browser's connection attempt (and delay it by a second's
  /// retransmission) before the listener can accept and sort them.
  static let backlog = SOMAXCONN

  /// Binds 127.0.0.1:`port`, and [::1]:`port` too when `bothFamilies`; any free port
  /// (the same on both) when `port` is nil.
  ///
  /// - Parameter log: told when ::1 cannot be used and only 127.0.0.1 listens.
  /// - Throws: `TokenKitError` `.signInFailed` when a port cannot be bound.
  init(port: UInt16?, bothFamilies: Bool, log: (String) -> Void) throws(TokenKitError) {
    for _ in 0..<(port == nil ? Self.portAttempts : 1) {
      let ipv4 = try Self.listen(.ipv4, port: port ?? 0).mapError(\.error).get()
      guard bothFamilies else {
        self.init(descriptors: [ipv4.socket], port: ipv4.port)
        return
      }
      switch Self.listen(.ipv6, port: ipv4.port) {
      case .success(let ipv6):
        self.init(descriptors: [ipv4.socket, ipv6.socket], port: ipv4.port)
        return
      case .failure(let failure) where failure.meansNoIPv6:
        log("listening on 127.0.0.1:\(ipv4.port) only: ::1 cannot be used (\(Self.errnoText(failure.errno)))")
        self.init(descriptors: [ipv4.socket], port: ipv4.port)
        return
      case .failure(let failure):
        _ = Glibc.close(ipv4.socket)
        guard port == nil, failure.errno == EADDRINUSE else { throw failure.error }
      }
    }
    throw TokenKitError(
      .signInFailed,
      "cannot wait for the sign-in redirect: no port was free on both 127.0.0.1 and ::1 in \(Self.portAttempts) tries",
      remedy: .freeRedirectPort(finder: "ss -ltnp src [::1]"))
  }

  private init(descriptors: [Int32], port: UInt16) {
    self.descriptors = descriptors
    self.port = port
  }

  private enum Family {
    case ipv4, ipv6

    /// How addresses of this family are written in messages, with their port.
    func place(port: UInt16) -> String { self == .ipv4 ? "127.0.0.1:\(port)" : "[::1]:\(port)" }
  }

  private struct Failure: Error {
    var family: Family
    var port: UInt16
    var errno: Int32
    /// The step that failed: `socket` fails for a family the kernel lacks.
    var atSocket = false

    /// Whether the machine has no IPv6, or no ::1 on its loopback interface.
    var meansNoIPv6: Bool {
      family == .ipv6 && (atSocket ? errno == EAFNOSUPPORT : errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT)
    }

    var error: TokenKitError {
      let place = family.place(port: port)
      switch errno {
      case EADDRINUSE:
        return TokenKitError(
          .signInFailed, "cannot wait for the sign-in redirect on \(place): another program uses that port",
          remedy: .freeRedirectPort(finder: "ss -ltnp 'sport = :\(port)'"))
      case EACCES:
        return TokenKitError(
          .signInFailed, "cannot wait for the sign-in redirect on \(place): ports below 1024 need privileges",
          recovery: "Configure a redirect port above 1023.")
      default:
        let reason = LoopbackListeningSockets.errnoText(errno)
        return TokenKitError(.signInFailed, "cannot wait for the sign-in redirect on \(place): \(reason)")
      }
    }
  }

  private static func listen(_ family: Family, port: UInt16) -> Result<(socket: Int32, port: UInt16), Failure> {
    let domain = family == .ipv4 ? AF_INET : AF_INET6
    let socket = Glibc.socket(domain, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard socket >= 0 else { return .failure(Failure(family: family, port: port, errno: errno, atSocket: true)) }
    var succeeded = false
    defer { if !succeeded { _ = Glibc.close(socket) } }
    // Lets a fixed port be bound again at once after the previous sign-in, whose closed
    // connections linger in TIME_WAIT. On Linux it does not let two sockets listen on one port.
    var on: Int32 = 1
    _ = setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    var storage = sockaddr_storage()
    let length: Int
    switch family {
    case .ipv4:
      length = withUnsafeMutableBytes(of: &storage) { raw in
        let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
        address.pointee.sin_family = sa_family_t(AF_INET)
        address.pointee.sin_port = port.bigEndian
        address.pointee.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian  // 127.0.0.1
        return MemoryLayout<sockaddr_in>.size
      }
    case .ipv6:
      guard setsockopt(socket, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
        return .failure(Failure(family: family, port: port, errno: errno))
      }
      length = withUnsafeMutableBytes(of: &storage) { raw in
        let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
        address.pointee.sin6_family = sa_family_t(AF_INET6)
        address.pointee.sin6_port = port.bigEndian
        address.pointee.sin6_addr = in6addr_loopback
        return MemoryLayout<sockaddr_in6>.size
      }
    }
    let bound = withUnsafePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(length)) }
    }
    guard bound == 0, Glibc.listen(socket, backlog) == 0 else {
      return .failure(Failure(family: family, port: port, errno: errno))
    }
    var boundAddress = sockaddr_storage()
    var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
    _ = withUnsafeMutablePointer(to: &boundAddress) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &boundLength) }
    }
    // sin_port and sin6_port share their offset.
    let boundPort = withUnsafeBytes(of: &boundAddress) {
      UInt16(bigEndian: $0.load(fromByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_port)!, as: UInt16.self))
    }
    // The socket must not block the serving thread in `accept`.
    _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
    succeeded = true
    return .success((socket, boundPort))
  }

  static func errnoText(_ number: Int32 = errno) -> String { String(cString: strerror(number)) }
}
