import CCurl
import Synchronization
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// Receives the authorization response on a loopback address (RFC 8252 §7.3): a tiny HTTP
/// server on 127.0.0.1 that answers the browser's redirect once.
///
/// It binds in `init`, so the port is known (and known to be free) before the browser is
/// sent anywhere. It listens on 127.0.0.1 only, whatever `host` says: `host` only goes
/// into `redirectURI`, because some providers register `http://localhost` rather than the
/// IP literal RFC 8252 §8.3 recommends. Nothing off the machine can reach it.
///
/// `receive` serves until a response is accepted or rejected, then closes the socket, so
/// a second redirect finds nothing listening. It never logs or shows the query: it holds
/// the authorization code.
public final class LoopbackRedirectListener: RedirectReceiver, Sendable {
  /// `http://HOST:PORT/PATH`, for the authorization request.
  public let redirectURI: String
  /// The port bound, which the kernel chose when `init` was given none.
  public let port: UInt16

  private let path: String
  private let hostNames: Set<String>
  private let successPage: String
  private let failurePage: @Sendable (String) -> String
  /// A socket pair (a pipe, made close-on-exec atomically) that wakes the serving thread for cancellation or `close()`.
  private let wakeReader: Int32
  private let wakeWriter: Int32
  private let state: Mutex<State>

  private struct State {
    /// The listening socket; -1 once closed.
    var socket: Int32
    var receiving = false
    var wakeReason: WakeReason?
  }

  private enum WakeReason { case cancelled, closed }

  private enum Outcome {
    case callback(AuthorizationCallback)
    case timedOut, cancelled, closed
    case failed(String)
  }

  /// Browsers send a few hundred bytes; 8 KiB is what common servers allow for a head.
  static let maximumHeadSize = 8 << 10
  /// A browser sends its request at once; a connection that has sent no complete head by
  /// then is idle (browsers open spare connections) or hostile, and must not hold a slot.
  static let readTimeout: Duration = .seconds(5)
  /// Browsers open two or three connections per page; more at once is not a browser.
  static let maximumConnections = 16

  /// Binds 127.0.0.1:`port` (any free port when nil) and starts listening.
  ///
  /// - Parameters:
  ///   - host: `127.0.0.1` or `localhost`: what `redirectURI` names.
  ///   - path: the path of `redirectURI`; requests for other paths get 404.
  ///   - successPage: the HTML shown after an accepted response.
  ///   - failurePage: makes the HTML shown after a rejected or ignored response from a
  ///     message that is already HTML-escaped.
  /// - Throws: `TokenKitError` `.signInFailed` when the port cannot be bound.
  public init(
    host: String = "127.0.0.1", port: UInt16? = nil, path: String = "/", successPage: String? = nil,
    failurePage: (@Sendable (_ escapedMessage: String) -> String)? = nil
  ) throws {
    let host = host.lowercased()
    guard host == "127.0.0.1" || host == "localhost" else {
      throw TokenKitError(
        .invalidDescriptor, "the loopback redirect host must be 127.0.0.1 or localhost, not \(host)",
        recovery: "Use http://127.0.0.1 as the redirect address (RFC 8252 §7.3).")
    }
    let path = path.hasPrefix("/") ? path : "/" + path
    let (socket, boundPort) = try Self.listen(port: port ?? 0)
    var pipeEnds: [Int32] = [-1, -1]
    let socketType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
    guard socketpair(AF_UNIX, socketType, 0, &pipeEnds) == 0 else {
      let reason = Self.errnoText()
      _ = Glibc.close(socket)
      throw TokenKitError(.signInFailed, "cannot wait for the sign-in redirect: \(reason)")
    }
    self.port = boundPort
    self.path = path
    redirectURI = "http://\(host):\(boundPort)\(path)"
    hostNames = ["127.0.0.1", "localhost"]
    self.successPage = successPage ?? LoopbackResponse.defaultSuccessPage
    self.failurePage = failurePage ?? { LoopbackResponse.defaultFailurePage(escapedMessage: $0) }
    wakeReader = pipeEnds[0]
    wakeWriter = pipeEnds[1]
    state = Mutex(State(socket: socket))
  }

  deinit {
    let socket = state.withLock { $0.socket }
    if socket >= 0 { _ = Glibc.close(socket) }
    _ = Glibc.close(wakeReader)
    _ = Glibc.close(wakeWriter)
  }

  /// Serves the browser until `judge` accepts or rejects a response, then closes.
  ///
  /// - Throws: `TokenKitError` `.signInTimedOut` after `timeout`; `CancellationError` when
  ///   the task is cancelled; `.signInFailed` when the listener is closed or busy.
  public func receive(
    timeout: Duration, judge: @escaping @Sendable (AuthorizationCallback) -> CallbackVerdict
  ) async throws -> AuthorizationCallback {
    let socket = try state.withLock { state throws(TokenKitError) -> Int32 in
      guard state.socket >= 0 else {
        throw TokenKitError(.signInFailed, "the sign-in redirect listener is already closed")
      }
      guard !state.receiving else {
        throw TokenKitError(.signInFailed, "the sign-in redirect listener is already waiting for the browser")
      }
      state.receiving = true
      return state.socket
    }
    let deadline = ContinuousClock.now + timeout
    let outcome = await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
        let started = DetachedThread.start {
          continuation.resume(returning: self.serve(socket, until: deadline, judge: judge))
        }
        if !started { continuation.resume(returning: .failed("no thread to wait for the browser on")) }
      }
    } onCancel: {
      wake(.cancelled)
    }
    // One answer per sign-in: whatever happened, nothing listens any more.
    state.withLock { state in
      _ = Glibc.close(state.socket)
      state.socket = -1
      state.receiving = false
    }
    switch outcome {
    case .callback(let callback):
      return callback
    case .timedOut:
      throw TokenKitError(
        .signInTimedOut, "no answer from the browser within \(timeout.secondsText)",
        recovery:
          "Run `tokenctl login` again and finish signing in in the browser, or use --paste or --device if the "
          + "browser cannot reach this computer.")
    case .cancelled:
      throw CancellationError()
    case .closed:
      throw TokenKitError(.signInFailed, "the sign-in redirect listener was closed before the browser answered")
    case .failed(let message):
      throw TokenKitError(.signInFailed, message)
    }
  }

  /// Stops listening; a `receive` in progress throws. Also done by `deinit`.
  public func close() {
    let socket = state.withLock { state -> Int32 in
      // While receiving, the serving thread owns the socket: wake it and let it finish.
      guard !state.receiving else { return -1 }
      defer { state.socket = -1 }
      return state.socket
    }
    if socket >= 0 { _ = Glibc.close(socket) } else { wake(.closed) }
  }

  private func wake(_ reason: WakeReason) {
    state.withLock { state in
      if state.wakeReason == nil { state.wakeReason = reason }
    }
    var byte: UInt8 = 1
    _ = write(wakeWriter, &byte, 1)
  }

  // MARK: Serving, on a thread of its own

  private func serve(
    _ listening: Int32, until deadline: ContinuousClock.Instant,
    judge: @Sendable (AuthorizationCallback) -> CallbackVerdict
  ) -> Outcome {
    var connections: [LoopbackConnection] = []
    defer { connections.forEach { $0.close() } }
    while true {
      if let reason = state.withLock({ $0.wakeReason }) { return reason == .cancelled ? .cancelled : .closed }
      let now = ContinuousClock.now
      if now >= deadline { return .timedOut }
      connections.removeAll { connection in
        guard connection.deadline <= now else { return false }
        connection.close()
        return true
      }

      var descriptors = [
        pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0),
        pollfd(fd: listening, events: Int16(POLLIN), revents: 0),
      ]
      descriptors += connections.map { pollfd(fd: $0.socket, events: Int16(POLLIN), revents: 0) }
      let wakeUp = connections.map(\.deadline).reduce(deadline, min)
      let ready = poll(&descriptors, nfds_t(descriptors.count), Int32(clamping: (wakeUp - now).millisecondsRoundedUp))
      if ready < 0 {
        if errno == EINTR { continue }
        return .failed("cannot wait for the sign-in redirect: \(Self.errnoText())")
      }
      if descriptors[0].revents != 0 {
        var bytes = [UInt8](repeating: 0, count: 64)
        _ = read(wakeReader, &bytes, bytes.count)
        continue
      }

      let readable = zip(connections, descriptors.dropFirst(2)).filter { $0.1.revents != 0 }.map(\.0)
      for connection in readable {
        switch connection.read(limit: Self.maximumHeadSize) {
        case .waiting:
          continue
        case .closed:
          connection.close()
          connections.removeAll { $0 === connection }
        case .tooLarge:
          answer(connection, status: 431, message: "the request is too large")
        case .head(nil):
          answer(connection, status: 400, message: "the request is not HTTP/1.1")
        case .head(let request?):
          if let outcome = respond(to: request, on: connection, judge: judge) {
            connections.removeAll { $0 === connection }
            connection.lingerThenClose()
            return outcome
          }
        }
      }
      if descriptors[1].revents != 0 { accept(from: listening, into: &connections) }
    }
  }

  /// Answers one request; the outcome when it ends the sign-in.
  private func respond(
    to request: LoopbackRequest, on connection: LoopbackConnection,
    judge: @Sendable (AuthorizationCallback) -> CallbackVerdict
  ) -> Outcome? {
    let callback: AuthorizationCallback
    switch request.route(path: path, hostNames: hostNames) {
    case .wrongMethod:
      answer(connection, status: 405, message: "only GET is expected here", extraFields: ["Allow: GET"])
      return nil
    case .foreignHost:
      answer(connection, status: 400, message: "this address is only for tokenctl's sign-in")
      return nil
    case .otherPath:
      answer(connection, status: 404, message: "this is not the address tokenctl waits at")
      return nil
    case .callback(let found):
      callback = found
    }
    switch judge(callback) {
    case .accept:
      answer(connection, html: successPage, status: 200)
      return .callback(callback)
    case .reject(let message):
      // 200: the request was fine; the page says the sign-in failed.
      answer(connection, status: 200, message: message)
      return .callback(callback)
    case .ignore(let reason):
      answer(connection, status: 400, message: reason)
      return nil
    }
  }

  private func answer(
    _ connection: LoopbackConnection, status: Int, message: String, extraFields: [String] = []
  ) {
    answer(connection, html: failurePage(LoopbackResponse.escape(message)), status: status, extraFields: extraFields)
  }

  private func answer(_ connection: LoopbackConnection, html: String, status: Int, extraFields: [String] = []) {
    connection.answer(
      LoopbackResponse.encode(status: status, html: html, extraFields: extraFields), timeout: .seconds(1),
      lingering: .seconds(1))
  }

  private func accept(from listening: Int32, into connections: inout [LoopbackConnection]) {
    while true {
      let socket = tokenctl_accept4(listening, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
      if socket < 0 {
        if errno == EINTR || errno == ECONNABORTED { continue }
        return  // EAGAIN: none left; anything else: try again at the next poll.
      }
      guard connections.count < Self.maximumConnections else {
        _ = Glibc.close(socket)
        continue
      }
      connections.append(LoopbackConnection(socket: socket, deadline: .now + Self.readTimeout))
    }
  }

  // MARK: Binding

  private static func listen(port: UInt16) throws -> (socket: Int32, port: UInt16) {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard socket >= 0 else {
      throw TokenKitError(.signInFailed, "cannot wait for the sign-in redirect: \(errnoText())")
    }
    var succeeded = false
    defer { if !succeeded { _ = Glibc.close(socket) } }
    // Lets a fixed port be bound again at once after the previous sign-in, whose closed
    // connections linger in TIME_WAIT. On Linux it does not let two sockets listen on one port.
    var on: Int32 = 1
    _ = setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian  // 127.0.0.1
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, Glibc.listen(socket, 16) == 0 else {
      let number = errno
      let place = "127.0.0.1:\(port)"
      switch number {
      case EADDRINUSE:
        throw TokenKitError(
          .signInFailed, "cannot wait for the sign-in redirect on \(place): another program uses that port",
          recovery:
            "Stop that program (`ss -ltnp 'sport = :\(port)'` names it) and try again, or use --paste or --device.")
      case EACCES:
        throw TokenKitError(
          .signInFailed, "cannot wait for the sign-in redirect on \(place): ports below 1024 need privileges",
          recovery: "Configure a redirect port above 1023.")
      default:
        throw TokenKitError(.signInFailed, "cannot wait for the sign-in redirect on \(place): \(errnoText(number))")
      }
    }
    var boundAddress = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &boundAddress) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
    }
    // The socket must not block the serving thread in `accept`.
    _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
    succeeded = true
    return (socket, UInt16(bigEndian: boundAddress.sin_port))
  }

  private static func errnoText(_ number: Int32 = errno) -> String { String(cString: strerror(number)) }
}
