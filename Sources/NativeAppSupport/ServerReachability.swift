#if canImport(Glibc)
  import Glibc
#endif

/// Whether a server answers at all, before a browser is sent to it: a TCP connection to
/// the host and port of a URL, opened and closed, with no request sent, so that a server
/// down or a host that does not resolve ends a sign-in at once rather than after its
/// five-minute wait for a browser that cannot get there.
///
/// Nothing is said to the server, so no server, real or a test's, sees a request it did
/// not expect. A proxy the environment names is where connections go instead: the check
/// is skipped then, as the way to the server is the proxy's to know.
public enum ServerReachability {
  /// Long enough for a slow network's handshake; a server that takes longer to accept a
  /// connection would not serve a sign-in either.
  public static let timeoutMilliseconds: Int32 = 5000

  /// The variables through which libcurl (and browsers) reach servers by a proxy.
  static let proxyVariables = [
    "https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY",
  ]

  /// Why `host`:`port` cannot be reached (`connection refused`, `no such host`), or nil
  /// when a connection was made, or when a proxy is configured in `environment`.
  public static func problem(host: String, port: Int, environment: [String: String]) -> String? {
    if proxyVariables.contains(where: { !(environment[$0] ?? "").isEmpty }) { return nil }
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_family = AF_UNSPEC
    var found: UnsafeMutablePointer<addrinfo>?
    // An IPv6 literal comes from a URL in brackets.
    let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    let status = getaddrinfo(name, String(port), &hints, &found)
    guard status == 0, let first = found else {
      return "no address for \(host) (\(String(cString: gai_strerror(status))))"
    }
    defer { freeaddrinfo(first) }
    var reason = "no address for \(host)"
    var entry: UnsafeMutablePointer<addrinfo>? = first
    while let current = entry {
      entry = current.pointee.ai_next
      guard let problem = connect(current.pointee) else { return nil }
      reason = problem
    }
    return reason
  }

  /// Connects to one address within the timeout; nil when connected.
  private static func connect(_ address: addrinfo) -> String? {
    let fd = socket(address.ai_family, address.ai_socktype | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return String(cString: strerror(errno)) }
    defer { close(fd) }
    if Glibc.connect(fd, address.ai_addr, address.ai_addrlen) == 0 { return nil }
    guard errno == EINPROGRESS else { return String(cString: strerror(errno)) }
    var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
    var ready: Int32
    repeat { ready = poll(&poller, 1, timeoutMilliseconds) } while ready < 0 && errno == EINTR
    guard ready > 0 else { return "no answer within \(timeoutMilliseconds / 1000) s" }
    var error: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else { return String(cString: strerror(errno)) }
    return error == 0 ? nil : String(cString: strerror(error))
  }
}
