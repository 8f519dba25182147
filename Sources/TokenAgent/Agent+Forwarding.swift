import AgentProtocol
import ApplicationConsent
import NativeAppSupport
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// Forwarding (tokenctl-agent(1), "Forwarding"): a socket of its own for each host that
/// `tokenctl ssh` forwards the agent to, open while the wrapper's connection is.
extension Agent {
  /// The folder of the forwarded hosts' sockets: `forward/` beside the agent's socket.
  var forwardFolder: String {
    let folder = listener.path[..<(listener.path.lastIndex(of: "/") ?? listener.path.startIndex)]
    return String(folder) + "/forward"
  }

  /// Answers a `forward` request of tokenctl's own on `connection`: opens a socket for the
  /// request's host, says where, and holds it open until the client closes the
  /// connection (or sends anything more), then removes it. Runs on the connection's thread
  /// for as long as the session lasts.
  func forward(_ request: AgentMessage, connection: Int32) {
    func refuse(_ error: TokenKitError) {
      try? AgentSocketIO.writeMessage(
        AgentMessage(error: error), to: connection, timeoutMilliseconds: Self.answerTimeoutMilliseconds)
    }
    guard let name = request["host"], let host = HostName(name) else {
      refuse(
        TokenKitError(
          .invalidArgument, "'\(request["host"] ?? "")' is no host name tokenctl can forward the agent to",
          recovery: "Give the name ssh connects to (ssh -G DESTINATION shows it as hostname)."))
      return
    }
    let socket: ForwardedSocket
    do {
      socket = try ForwardedSocket.open(host: host, folder: forwardFolder, root: nil)
    } catch {
      refuse(error as? TokenKitError ?? TokenKitError(.agentFailure, "\(error)"))
      return
    }
    let key = ObjectIdentifier(socket)
    forwarded.withLock { $0[key] = socket }
    defer {
      forwarded.withLock { _ = $0.removeValue(forKey: key) }
      socket.close()
      log("forwarding to \(host) ended")
    }
    guard threads.run({ [self] in acceptForwarded(socket) }) else {
      refuse(TokenKitError(.agentFailure, "the agent could not start a thread for the forwarded host"))
      return
    }
    var answer = AgentMessage(AgentMessage.Answer.forwarding)
    answer.append("socket", socket.path)
    guard
      (try? AgentSocketIO.writeMessage(answer, to: connection, timeoutMilliseconds: Self.answerTimeoutMilliseconds))
        != nil
    else { return }
    log("forwarding to \(host) on \(socket.path)")
    Self.waitForHangUp(connection)
  }

  /// Connections of a host held for their request while the idle bound is full, at most:
  /// what ssh carries comes a round trip after its connection (ssh opens the channel,
  /// then sends what the remote program wrote), so a host's programs asking at once are
  /// all idle at first. Held on the accepting thread, they cost a descriptor each, not a
  /// thread; beyond these, a host's idle connections are closed at once.
  static let heldPerHost = 256

  /// Serves the connections of a forwarded host's socket until it is closed.
  ///
  /// The main socket's bound of idle connections holds here too (``admitIdle(_:)``), so
  /// that a host holding thousands costs the agent no more threads than one process here
  /// can. A connection over the bound waits here for its request instead of being closed:
  /// it gets a thread once its request is there, or is closed when it does not come
  /// within the time any connection has to send it.
  private func acceptForwarded(_ socket: ForwardedSocket) {
    var held: [(connection: Int32, until: ContinuousClock.Instant)] = []
    defer { for entry in held { close(entry.connection) } }
    let clock = ContinuousClock()
    let patience = Duration.milliseconds(Int(Self.requestTimeoutMilliseconds))
    while true {
      let now = clock.now
      for entry in held where entry.until <= now { close(entry.connection) }
      held.removeAll { $0.until <= now }
      let wait = held.map { $0.until }.min().map { Int32(max(1, ($0 - now) / .milliseconds(1))) } ?? -1
      guard let event = socket.next(waiting: held.map(\.connection), timeoutMilliseconds: wait) else { return }
      let connection: Int32
      switch event {
      case .timedOut: continue
      case .request(let ready):
        held.removeAll { $0.connection == ready }
        connection = ready
      case .connection(let accepted):
        // The local ssh runs as this user; anything else gets nothing.
        guard AgentSocketIO.peerUID(accepted) == getuid() else {
          close(accepted)
          continue
        }
        connection = accepted
      }
      guard let pid = admitIdle(connection) else {
        if case .connection = event, held.count < Self.heldPerHost {
          held.append((connection, clock.now + patience))
        } else {
          close(connection)
        }
        continue
      }
      let host = socket.host
      if !threads.run({ [self] in serve(connection, host: host, requestRead: { [self] in closed(pid) }) }) {
        closed(pid)
        close(connection)
      }
    }
  }

  /// Returns when the peer of `connection` closes it or writes to it.
  static func waitForHangUp(_ connection: Int32) {
    // POLLRDHUP (0x2000, which Glibc's module does not export): the peer closed its end.
    var entry = pollfd(fd: connection, events: Int16(POLLIN) | 0x2000, revents: 0)
    while poll(&entry, 1, -1) < 0 && errno == EINTR {}
  }
}
