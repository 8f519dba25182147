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

  /// Serves the connections of a forwarded host's socket until it is closed.
  private func acceptForwarded(_ socket: ForwardedSocket) {
    while let connection = socket.accept() {
      // The local ssh runs as this user; anything else gets nothing.
      guard AgentSocketIO.peerUID(connection) == getuid() else {
        close(connection)
        continue
      }
      // The main socket's bound of idle connections, so that a host holding thousands
      // costs the agent no more threads than one process here can.
      guard let pid = admitIdle(connection) else {
        close(connection)
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
