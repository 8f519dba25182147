import Foundation
import TestSupport

/// A deliberately dumb HTTP client on plain sockets, for requests no real client sends:
/// other methods, oversized or malformed heads, forged `Host` fields, idle connections.
enum RawHTTPClient {
  struct Response {
    var status: Int
    var head: String
    var body: String
  }

  /// Why a connection failed.
  struct ConnectFailure: Error, Equatable {
    var errno: Int32
  }

  /// Whether connecting to `address`:`port` is refused (nothing listens there).
  static func isRefused(_ address: String = "127.0.0.1", port: Int) -> Bool {
    switch connect(address, port: port) {
    case .success(let socket):
      close(socket)
      return false
    case .failure(let failure):
      return failure.errno == ECONNREFUSED
    }
  }

  /// Connects to `address` (`127.0.0.1`, `::1`):`port`; the socket, or the errno of the failure.
  static func connect(_ address: String = "127.0.0.1", port: Int) -> Result<Int32, ConnectFailure> {
    let target = SocketAddress(address, port: port)
    let socket = Glibc.socket(target.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard socket >= 0 else { return .failure(ConnectFailure(errno: errno)) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard target.withSockaddr({ Glibc.connect(socket, $0, $1) }) == 0 else {
      let number = errno
      close(socket)
      return .failure(ConnectFailure(errno: number))
    }
    return .success(socket)
  }

  /// Sends `request` as is and reads the response until the server closes, on a thread
  /// of its own (the socket calls block).
  static func exchange(_ address: String = "127.0.0.1", port: Int, _ request: String) async throws -> Response {
    try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread {
        continuation.resume(with: Result { try blockingExchange(address, port: port, request) })
      }
    }
  }

  /// Returns once the server on `port` has answered a request for a path nobody serves:
  /// for a clock that is to time the server, not how soon a busy test run starts it.
  static func waitUntilServing(port: Int) async throws {
    let answer = try await exchange(port: port, "GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
    guard answer.status == 404 else { throw TestFailure("the server answered \(answer.head)") }
  }

  /// Whether connections to `address`:`port` are refused within a few seconds.
  ///
  /// Not at once: a child that another test is spawning holds a copy of every descriptor,
  /// close-on-exec or not, until it has called exec, which on a busy machine takes a while;
  /// a listening socket closed meanwhile keeps accepting until then.
  static func isEventuallyRefused(_ address: String = "127.0.0.1", port: Int) async -> Bool {
    for _ in 0..<100 {
      if isRefused(address, port: port) { return true }
      try? await Task.sleep(for: .milliseconds(50))
    }
    return false
  }

  private static func blockingExchange(_ address: String, port: Int, _ request: String) throws -> Response {
    let socket = try connect(address, port: port).mapError { TestFailure("connect: \($0)") }.get()
    defer { close(socket) }
    // An answer comes once the listener serves, which on a test run that keeps Swift's
    // threads busy with blocking tests may be long after this connection was accepted by
    // the kernel: wait for it as long as a suite may take, not the 5 s of a bare connection.
    var patience = timeval(tv_sec: 45, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size))
    var bytes = Array(request.utf8)[...]
    while !bytes.isEmpty {
      let sent = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      // The server may answer and close before taking a long request; read what it said.
      guard sent > 0 else { break }
      bytes = bytes.dropFirst(sent)
    }
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = recv(socket, &chunk, chunk.count, 0)
      guard count > 0 else { break }
      received += chunk[..<count]
    }
    let text = String(decoding: received, as: UTF8.self)
    guard let split = text.range(of: "\r\n\r\n") else {
      throw TestFailure("no response head in \(text.debugDescription)")
    }
    let head = String(text[..<split.lowerBound])
    let statusText = head.split(separator: " ").dropFirst().first ?? ""
    return Response(status: Int(statusText) ?? 0, head: head, body: String(text[split.upperBound...]))
  }

  /// An IPv4 address of this machine other than the loopback ones, if it has one.
  static var otherLocalAddress: String? {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { return nil }
    defer { freeifaddrs(list) }
    var entry = list
    while let current = entry {
      defer { entry = current.pointee.ifa_next }
      guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
      var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
      address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
        var inAddress = $0.pointee.sin_addr
        _ = inet_ntop(AF_INET, &inAddress, &text, socklen_t(text.count))
      }
      let string = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if !string.hasPrefix("127.") { return string }
    }
    return nil
  }

  /// The local addresses of the listening TCP sockets on `port`, from /proc/net/tcp
  /// (`0100007F` is 127.0.0.1, `00000000` is any address), or /proc/net/tcp6 when `ipv6`
  /// (`00000000000000000000000001000000` is ::1).
  static func listeningAddresses(port: Int, ipv6: Bool = false) throws -> [String] {
    // Read to the end: procfs reports a size of 0, and a one-shot read may stop at the
    // first page, which holds only the first few dozen sockets.
    guard let handle = FileHandle(forReadingAtPath: ipv6 ? "/proc/net/tcp6" : "/proc/net/tcp") else { return [] }
    defer { try? handle.close() }
    let table = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    let wanted = String(format: "%04X", port)
    return table.split(separator: "\n").dropFirst().compactMap { line in
      let fields = line.split(separator: " ")
      guard fields.count > 3, fields[3] == "0A" else { return nil }  // 0A: LISTEN
      let local = fields[1].split(separator: ":")
      return local.count == 2 && local[1] == wanted ? String(local[0]) : nil
    }
  }
}
