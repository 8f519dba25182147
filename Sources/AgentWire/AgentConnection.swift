import CLinux

#if canImport(Glibc)
  import Glibc
#endif

/// A client's connection to the agent: one request, one answer.
///
/// Connecting never waits: with no socket, or nobody listening on it, `connect` fails at
/// once and the client takes its direct path. The peer must run as this user: a socket at
/// `TOKENCTL_AGENT_SOCKET` that another user planted gets no request, since a request may
/// name accounts and an answer is trusted.
public final class AgentConnection {
  private let fd: Int32

  /// Connects to the agent at `path`; nil when none answers there.
  public init?(path: String) {
    guard var address = AgentSocketIO.address(path) else { return nil }
    fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard connected == 0, AgentSocketIO.peerUID(fd) == getuid() else {
      close(fd)
      return nil
    }
  }

  deinit { close(fd) }

  /// Sends `request` and reads the answer. `timeoutMilliseconds` bounds the whole wait: an
  /// answer may wait for a refresh, which has its own, shorter, limits.
  ///
  /// The agent answers only applications it can tell, by their /proc/PID/exe, which a
  /// process that is not dumpable (ProcessProtection) closes to it. So this process is
  /// dumpable from before its request until the answer is there to read, and not
  /// dumpable again before it reads it: the answer, which may be a token, is never in the
  /// memory of a dumpable process. What is, meanwhile, is the request.
  ///
  /// The request says it reads `working` (``AgentMessage/progressField``): the first frame
  /// must come within `firstFrameMilliseconds`, or the agent is taken for wedged (a
  /// stopped agent's socket still queues connections); a `working` frame extends the wait
  /// to `timeoutMilliseconds`.
  public func exchange(
    _ request: AgentMessage, firstFrameMilliseconds: Int32 = AgentConnection.firstFrameMilliseconds,
    timeoutMilliseconds: Int32
  ) throws(AgentProtocolError)
    -> AgentMessage
  {
    var request = request
    request.append(AgentMessage.progressField, "1")
    let protected = tokenctl_is_dumpable() == 0
    if protected { _ = tokenctl_set_dumpable() }
    do {
      try AgentSocketIO.writeMessage(request, to: fd, timeoutMilliseconds: 5000)
      try AgentSocketIO.waitReadable(fd, timeoutMilliseconds: min(firstFrameMilliseconds, timeoutMilliseconds))
    } catch {
      if protected { _ = tokenctl_set_undumpable() }
      throw error
    }
    if protected { _ = tokenctl_set_undumpable() }
    let first = try AgentSocketIO.readMessage(
      from: fd, limit: AgentMessage.maximumResponseSize, timeoutMilliseconds: timeoutMilliseconds)
    guard first.kind == AgentMessage.Answer.working else { return first }
    if protected { _ = tokenctl_set_dumpable() }
    do {
      try AgentSocketIO.waitReadable(fd, timeoutMilliseconds: timeoutMilliseconds)
    } catch {
      if protected { _ = tokenctl_set_undumpable() }
      throw error
    }
    if protected { _ = tokenctl_set_undumpable() }
    return try AgentSocketIO.readMessage(
      from: fd, limit: AgentMessage.maximumResponseSize, timeoutMilliseconds: timeoutMilliseconds)
  }

  /// How long a client waits for the agent's first frame: the agent answers from memory in
  /// about a millisecond and says `working` after a quarter of a second
  /// (`Agent.workingAfterMilliseconds`); three seconds leave room for a loaded machine,
  /// and are all a wedged agent costs a client before its direct path.
  public static let firstFrameMilliseconds: Int32 = 3000
}
