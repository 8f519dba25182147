import CLinux
import ProcessRuntime
import Synchronization
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// Receives the authorization response on a loopback address (RFC 8252 §7.3): a tiny HTTP
/// server on 127.0.0.1 that answers the browser's redirect once.
///
/// It binds in `init`, so the port is known (and known to be free) before the browser is
/// sent anywhere. For `host` `127.0.0.1` it listens there only. Some providers register
/// `http://localhost` rather than the IP literal RFC 8252 §8.3 recommends, and a browser
/// may resolve that to ::1: for `localhost` it listens on [::1] too, on the same port, so
/// that no other program can take that address and receive the code (see
/// ``LoopbackListeningSockets``). Either way, nothing off the machine can reach it, and a
/// request is served the same whichever address it came to.
///
/// A few connection slots are enough for a browser. A local program can open many
/// connections and send nothing; when every slot is taken, the oldest connection that has
/// sent no request line gives way to the newcomer, so such connections cannot keep the
/// browser out, and a connection that stays silent is closed soon in any case.
///
/// `receive` serves until a response is accepted or rejected, then closes the sockets, so
/// a second redirect finds nothing listening. Given an `endingPage`, it holds that
/// browser's answer until ``finish(_:)`` says how the sign-in ended (the code exchanged,
/// the account known and stored), so that the page names the account or what failed, not
/// merely that the browser came back; after ``answerHold`` without word it answers with
/// the page it would have sent at once. It never logs or shows the query: it holds
/// the authorization code.
///
/// Why our own rather than an HTTP server library (SwiftNIO, Hummingbird, FlyingFox): it
/// answers one request, once, and the rules above (bound before the browser opens, both
/// address families on one port, slots that give way to silent connections, nothing
/// logged) are the whole of it; a server framework would bring its event loops and
/// threads into every `tokenctl login` for a single GET.
public final class LoopbackRedirectListener: RedirectReceiver, Sendable {
  /// `http://HOST:PORT/PATH`, for the authorization request.
  public let redirectURI: String
  /// The port bound, which the kernel chose when `init` was given none.
  public let port: UInt16

  private let path: String
  private let hostNames: Set<String>
  private let successPage: String
  private let failurePage: @Sendable (String) -> String
  private let endingPage: (@Sendable (SignInEnding) -> String)?
  private let log: @Sendable (String) -> Void
  /// A socket pair (a pipe, made close-on-exec atomically) that wakes the serving thread for cancellation or `close()`.
  private let wakeReader: Int32
  private let wakeWriter: Int32
  private let state: Mutex<State>

  private struct State {
    /// The listening sockets; empty once closed.
    var sockets: [Int32]
    var receiving = false
    var wakeReason: WakeReason?
    /// The browser's request that ended the wait, unanswered until ``finish(_:)`` or
    /// ``answerHold``: whichever takes it answers it.
    var held: HeldAnswer?
  }

  /// A connection whose answer waits for the sign-in's ending, and the page it gets if
  /// none comes. Handed from the serving thread to whichever thread answers it, under the
  /// state's lock; used by one thread at a time.
  private final class HeldAnswer: @unchecked Sendable {
    let connection: LoopbackConnection
    let fallbackPage: String
    init(_ connection: LoopbackConnection, fallbackPage: String) {
      self.connection = connection
      self.fallbackPage = fallbackPage
    }
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
  /// It also bounds a connection that trickles its request a byte at a time.
  static let readTimeout: Duration = .seconds(5)
  /// A browser sends its request line the moment it has connected, within milliseconds
  /// even on a loaded machine; a connection silent for longer is a spare one a browser
  /// opened just in case, or one held open to take a slot. Short, so that such connections
  /// free their slots soon; two seconds leave room for a browser on a machine busy with
  /// a build.
  static let firstBytesTimeout: Duration = .seconds(2)
  /// ``firstBytesTimeout``, or a test's longer one: a spare connection that stays open all
  /// the test long shows that it holds nothing up, whatever the machine's load.
  let firstBytesTimeout: Duration
  /// Browsers open two or three connections per page; more at once is not a browser.
  static let maximumConnections = 16
  /// How long the browser's answer waits for ``finish(_:)``: the code exchange, the
  /// account's details and the keyring take a second or two, but a keyring may ask to be
  /// unlocked first. Browsers wait minutes for an answer; a person looking at a blank
  /// page should not, so after this the page says to look at the terminal.
  package static let answerHold: Duration = .seconds(30)
  /// ``answerHold``, or a test's shorter one.
  let answerHold: Duration

  /// Binds 127.0.0.1:`port` (any free port when nil), and [::1] on the same port for
  /// `localhost`, and starts listening.
  ///
  /// - Parameters:
  ///   - host: `127.0.0.1` or `localhost`: what `redirectURI` names.
  ///   - port: a fixed port, which must then be free on each address listened on.
  ///   - path: the path of `redirectURI`; requests for other paths get 404.
  ///   - successPage: the HTML shown after an accepted response.
  ///   - failurePage: makes the HTML shown after a rejected or ignored response from a
  ///     message that is already HTML-escaped.
  ///   - endingPage: makes the HTML shown once ``finish(_:)`` says how the sign-in ended;
  ///     given one, the listener holds the browser's answer until then (see above).
  ///   - log: told, in a line, where the listener waits and of what a debug log should
  ///     show: ::1 missing on this machine, connections closed to make room. Never the
  ///     requests, which hold the code.
  /// - Throws: `TokenKitError` `.signInFailed` when the port cannot be bound.
  /// A page for `successPage` or `failurePage`, as the default ones are made: headed
  /// `title`, with `windowTitle` (default: the same) in the browser's tab, both plain text,
  /// and `escapedParagraph`, HTML.
  public static func page(title: String, windowTitle: String? = nil, escapedParagraph: String) -> String {
    LoopbackResponse.page(title: title, windowTitle: windowTitle, paragraph: escapedParagraph)
  }

  /// `text` escaped for a page's HTML.
  public static func escapeHTML(_ text: String) -> String { LoopbackResponse.escape(text) }

  public convenience init(
    host: String = "127.0.0.1", port: UInt16? = nil, path: String = "/", successPage: String? = nil,
    failurePage: (@Sendable (_ escapedMessage: String) -> String)? = nil,
    endingPage: (@Sendable (SignInEnding) -> String)? = nil,
    log: @escaping @Sendable (String) -> Void = { _ in }
  ) throws {
    try self.init(
      host: host, port: port, path: path, successPage: successPage, failurePage: failurePage,
      endingPage: endingPage, log: log, firstBytesTimeout: Self.firstBytesTimeout)
  }

  package init(
    host: String = "127.0.0.1", port: UInt16? = nil, path: String = "/", successPage: String? = nil,
    failurePage: (@Sendable (_ escapedMessage: String) -> String)? = nil,
    endingPage: (@Sendable (SignInEnding) -> String)? = nil,
    log: @escaping @Sendable (String) -> Void = { _ in }, firstBytesTimeout: Duration,
    answerHold: Duration = LoopbackRedirectListener.answerHold
  ) throws {
    self.firstBytesTimeout = firstBytesTimeout
    self.answerHold = answerHold
    self.endingPage = endingPage
    let host = host.lowercased()
    guard host == "127.0.0.1" || host == "localhost" else {
      throw TokenKitError(
        .invalidDescriptor, "the loopback redirect host must be 127.0.0.1 or localhost, not \(host)",
        recovery: "Use http://127.0.0.1 as the redirect address (RFC 8252 §7.3).")
    }
    let path = path.hasPrefix("/") ? path : "/" + path
    let listening = try LoopbackListeningSockets(port: port, bothFamilies: host == "localhost", log: log)
    let boundPort = listening.port
    var pipeEnds: [Int32] = [-1, -1]
    let socketType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
    guard socketpair(AF_UNIX, socketType, 0, &pipeEnds) == 0 else {
      let reason = LoopbackListeningSockets.errnoText()
      listening.descriptors.forEach { _ = Glibc.close($0) }
      throw TokenKitError(.signInFailed, "cannot wait for the sign-in redirect: \(reason)")
    }
    let places = listening.descriptors.count == 2 ? "127.0.0.1 and [::1]" : "127.0.0.1"
    log("waiting for the sign-in redirect on \(places), port \(boundPort)")
    self.port = boundPort
    self.path = path
    redirectURI = "http://\(host):\(boundPort)\(path)"
    hostNames = ["127.0.0.1", "localhost"]
    self.successPage = successPage ?? LoopbackResponse.defaultSuccessPage
    self.failurePage = failurePage ?? { LoopbackResponse.defaultFailurePage(escapedMessage: $0) }
    self.log = log
    wakeReader = pipeEnds[0]
    wakeWriter = pipeEnds[1]
    state = Mutex(State(sockets: listening.descriptors))
  }

  deinit {
    state.withLock { $0.sockets }.forEach { _ = Glibc.close($0) }
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
    let sockets = try state.withLock { state throws(TokenKitError) -> [Int32] in
      guard !state.sockets.isEmpty else {
        throw TokenKitError(.signInFailed, "the sign-in redirect listener is already closed")
      }
      guard !state.receiving else {
        throw TokenKitError(.signInFailed, "the sign-in redirect listener is already waiting for the browser")
      }
      state.receiving = true
      return state.sockets
    }
    let deadline = ContinuousClock.now + timeout
    let outcome = await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
        let started = DetachedThread.start {
          let outcome = self.serve(sockets, until: deadline, judge: judge)
          continuation.resume(returning: outcome)
          // The caller now exchanges the code; the browser waits for how that ends.
          self.holdAnswer(until: .now + self.answerHold)
        }
        if !started { continuation.resume(returning: .failed("no thread to wait for the browser on")) }
      }
    } onCancel: {
      wake(.cancelled)
    }
    // One answer per sign-in: whatever happened, nothing listens any more.
    state.withLock { state in
      state.sockets.forEach { _ = Glibc.close($0) }
      state.sockets = []
      state.receiving = false
    }
    switch outcome {
    case .callback(let callback):
      return callback
    case .timedOut:
      throw TokenKitError(
        .signInTimedOut, "no answer from the browser within \(DurationText.format(timeout))",
        remedy: .finishSignIn(type: nil))
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
    let sockets = state.withLock { state -> [Int32]? in
      // While receiving, the serving thread owns the sockets: wake it and let it finish.
      guard !state.receiving else { return nil }
      defer { state.sockets = [] }
      return state.sockets
    }
    if let sockets { sockets.forEach { _ = Glibc.close($0) } } else { wake(.closed) }
  }

  /// Answers the browser's held request with the page for `ending`, if it still waits;
  /// returns once the page is sent (at most a second or two: the browser is local).
  public func finish(_ ending: SignInEnding) {
    guard let endingPage, let held = takeHeldAnswer() else { return }
    answer(held.connection, html: endingPage(ending), status: 200)
    held.connection.lingerThenClose()
    // The holding thread need not wait out its bound.
    var byte: UInt8 = 1
    _ = write(wakeWriter, &byte, 1)
  }

  /// On the serving thread, after `receive` returned: waits for ``finish(_:)`` to take the
  /// held request, and answers it with its fallback page after `deadline`.
  private func holdAnswer(until deadline: ContinuousClock.Instant) {
    while state.withLock({ $0.held != nil }) {
      let now = ContinuousClock.now
      guard now < deadline else { break }
      var descriptor = pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0)
      let ready = poll(&descriptor, 1, Int32(clamping: (deadline - now).millisecondsRoundedUp))
      if ready > 0 {
        var bytes = [UInt8](repeating: 0, count: 64)
        _ = read(wakeReader, &bytes, bytes.count)
      }
    }
    guard let held = takeHeldAnswer() else { return }
    log("nothing said how the sign-in ended within \(DurationText.format(answerHold)): the browser gets the plain page")
    answer(held.connection, html: held.fallbackPage, status: 200)
    held.connection.lingerThenClose()
  }

  /// The held request, for the one thread that answers it.
  private func takeHeldAnswer() -> HeldAnswer? {
    state.withLock { state in
      defer { state.held = nil }
      return state.held
    }
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
    _ listening: [Int32], until deadline: ContinuousClock.Instant,
    judge: @Sendable (AuthorizationCallback) -> CallbackVerdict
  ) -> Outcome {
    // In the order they were accepted: the oldest first.
    var connections: [LoopbackConnection] = []
    var crowded = false
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

      var descriptors = [pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0)]
      descriptors += listening.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      descriptors += connections.map { pollfd(fd: $0.socket, events: Int16(POLLIN), revents: 0) }
      let wakeUp = connections.map(\.deadline).reduce(deadline, min)
      let ready = poll(&descriptors, nfds_t(descriptors.count), Int32(clamping: (wakeUp - now).millisecondsRoundedUp))
      if ready < 0 {
        if errno == EINTR { continue }
        return .failed("cannot wait for the sign-in redirect: \(LoopbackListeningSockets.errnoText())")
      }
      if descriptors[0].revents != 0 {
        var bytes = [UInt8](repeating: 0, count: 64)
        _ = read(wakeReader, &bytes, bytes.count)
        continue
      }

      let readable = zip(connections, descriptors.dropFirst(1 + listening.count)).filter { $0.1.revents != 0 }.map(\.0)
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
            if let fallbackPage = outcome.heldPage {
              // Answered once the sign-in has ended (`finish`), or by `holdAnswer`.
              state.withLock { $0.held = HeldAnswer(connection, fallbackPage: fallbackPage) }
            } else {
              connection.lingerThenClose()
            }
            return outcome.outcome
          }
        }
      }
      for (socket, descriptor) in zip(listening, descriptors.dropFirst()) where descriptor.revents != 0 {
        accept(from: socket, into: &connections, crowded: &crowded)
      }
    }
  }

  /// Answers one request; the outcome when it ends the sign-in, with the page to send
  /// if it is held for ``finish(_:)`` and none comes (`heldPage`), in which case it is not
  /// answered yet.
  private func respond(
    to request: LoopbackRequest, on connection: LoopbackConnection,
    judge: @Sendable (AuthorizationCallback) -> CallbackVerdict
  ) -> (outcome: Outcome, heldPage: String?)? {
    let callback: AuthorizationCallback
    switch request.route(path: path, hostNames: hostNames) {
    case .wrongMethod:
      answer(connection, status: 405, message: "only GET is expected here", extraFields: ["Allow: GET"])
      return nil
    case .foreignHost:
      answer(connection, status: 400, message: "this address is only for a sign-in's redirect")
      return nil
    case .otherPath:
      answer(connection, status: 404, message: "this is not the address the sign-in waits at")
      return nil
    case .callback(let found):
      callback = found
    }
    switch judge(callback) {
    case .accept:
      if endingPage != nil { return (.callback(callback), successPage) }
      answer(connection, html: successPage, status: 200)
      return (.callback(callback), nil)
    case .reject(let message):
      // 200: the request was fine; the page says the sign-in failed.
      let page = failurePage(LoopbackResponse.escape(message))
      if endingPage != nil { return (.callback(callback), page) }
      answer(connection, html: page, status: 200)
      return (.callback(callback), nil)
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

  /// Accepts the waiting connections. When the slots are full, the connection that has
  /// come least far with its request (the oldest among equals) gives way: one that has sent
  /// nothing stands for no browser's request, while the newcomer may be the redirect. Only
  /// when every slot holds a request about to be answered is the newcomer turned away.
  ///
  /// At most a slot-table's worth per call: a program connecting as fast as we accept must
  /// not keep the loop from reading the requests it already has.
  private func accept(from listening: Int32, into connections: inout [LoopbackConnection], crowded: inout Bool) {
    for _ in 0..<Self.maximumConnections {
      let socket = tokenctl_accept4(listening, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
      if socket < 0 {
        if errno == EINTR || errno == ECONNABORTED { continue }
        return  // EAGAIN: none left; anything else: try again at the next poll.
      }
      if connections.count >= Self.maximumConnections {
        guard let victim = Self.leastAdvanced(connections) else {
          _ = Glibc.close(socket)
          continue
        }
        if !crowded {
          crowded = true
          log(
            "more than \(Self.maximumConnections) connections to the sign-in redirect listener at once: "
              + "closing those that send nothing to make room (is another program connecting?)")
        }
        connections.remove(at: victim).close()
      }
      let now = ContinuousClock.now
      connections.append(
        LoopbackConnection(socket: socket, firstBytesBy: now + firstBytesTimeout, headBy: now + Self.readTimeout))
    }
  }

  /// The index of the oldest connection at the earliest stage, unless every one has a
  /// complete request waiting.
  private static func leastAdvanced(_ connections: [LoopbackConnection]) -> Int? {
    var found: (index: Int, stage: LoopbackConnection.Stage)?
    for (index, connection) in connections.enumerated() {
      let stage = connection.stage(limit: maximumHeadSize)
      // Nothing comes earlier, and the oldest comes first.
      if stage == .silent { return index }
      if stage < .complete, stage < found?.stage ?? .complete { found = (index, stage) }
    }
    return found?.index
  }
}
