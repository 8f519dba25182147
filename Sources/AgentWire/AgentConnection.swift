import CLinux

#if !hasFeature(Embedded)
  // Embedded, the front end is one module of these sources (Sources/tokenctl-front-end).
  import SocketIO
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// A client's connection to the agent: one request, one answer.
///
/// Connecting never waits: the socket is non-blocking, so with no socket, nobody
/// listening on it, or a listen queue that is full (an agent that stopped accepting while
/// the kernel queued connections for it), `connect` fails at once and the client takes
/// its direct path. The peer must run as this user: a socket at `TOKENCTL_AGENT_SOCKET`
/// that another user planted gets no request, since a request may name accounts and an
/// answer is trusted.
///
/// No wait is unbounded either: the agent's first frame, whole, must come within
/// ``firstFrameMilliseconds``, and an agent that said `working` must say it again, or
/// answer, within ``silenceMilliseconds``.
public final class AgentConnection {
  private let fd: Int32

  /// What came of connecting to a socket.
  public enum Opening {
    case connected(AgentConnection)
    /// No socket there, nobody listening on it, or a peer of another user: no agent.
    case noAgent
    /// A socket whose listen queue is full: an agent is there but takes no connection
    /// (stopped, say), and is taken for one that does not answer.
    case queueFull
  }

  /// Connects to the agent at `path`, without waiting.
  public static func open(path: String) -> Opening {
    guard var address = AgentSocketIO.address(path) else { return .noAgent }
    let fd = socket(
      AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { return .noAgent }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    // A UNIX stream socket connects at once or not at all: EAGAIN is a full listen queue
    // (unix(7)), never a connection under way.
    let failure = connected == 0 ? 0 : errno
    guard connected == 0, AgentSocketIO.peerUID(fd) == getuid() else {
      close(fd)
      return failure == EAGAIN ? .queueFull : .noAgent
    }
    return .connected(AgentConnection(fd))
  }

  private init(_ fd: Int32) { self.fd = fd }

  deinit { close(fd) }

  /// The agent's pid (SO_PEERCRED), for a message that names it.
  public var peerPID: Int32? { AgentSocketIO.peerPID(fd) }

  /// Sends `request` and reads the answer. `timeoutMilliseconds` bounds the whole wait: an
  /// answer may wait for a refresh, which has its own, shorter, limits.
  ///
  /// The agent answers only applications it can tell, by their /proc/PID/exe, which a
  /// process that is not dumpable (ProcessProtection) closes to it. So this process is
  /// dumpable from before its request until a frame is there to read, and not dumpable
  /// again before it reads it: the answer, which may be a token, is never in the memory of
  /// a dumpable process. What is, meanwhile, is the request.
  ///
  /// The request says it reads `working` (``AgentMessage/progressField``). The request's
  /// write and the first frame, whole, must be done within `firstFrameMilliseconds`, or
  /// the agent is taken for wedged (``AgentProtocolError/timedOut``). An agent at work
  /// repeats `working` (`Agent.workingEveryMilliseconds`): each next frame, whole, must come
  /// within `silenceMilliseconds`, or the agent is taken for one that went silent in the
  /// middle of its work (``AgentProtocolError/silentWhileWorking``).
  public func exchange(
    _ request: AgentMessage, firstFrameMilliseconds: Int32 = AgentConnection.firstFrameMilliseconds,
    silenceMilliseconds: Int32 = AgentConnection.silenceMilliseconds, timeoutMilliseconds: Int32
  ) throws(AgentProtocolError)
    -> AgentMessage
  {
    var request = request
    request.append(AgentMessage.progressField, "1")
    let protected = tokenctl_is_dumpable() == 0
    let whole = Deadline(milliseconds: timeoutMilliseconds)
    var frame = Deadline(milliseconds: min(firstFrameMilliseconds, timeoutMilliseconds))
    var working = false
    while true {
      if protected { _ = tokenctl_set_dumpable() }
      do {
        if !working { try AgentSocketIO.writeMessage(request, to: fd, until: frame) }
        try AgentSocketIO.waitReadable(fd, until: frame)
      } catch {
        if protected { _ = tokenctl_set_undumpable() }
        throw Self.ended(by: error, working: working, whole: whole)
      }
      if protected { _ = tokenctl_set_undumpable() }
      let message: AgentMessage
      do {
        message = try AgentSocketIO.readMessage(from: fd, limit: AgentMessage.maximumResponseSize, until: frame)
      } catch {
        throw Self.ended(by: error, working: working, whole: whole)
      }
      guard message.kind == AgentMessage.Answer.working else { return message }
      working = true
      frame = Deadline(milliseconds: min(silenceMilliseconds, whole.remainingMilliseconds()))
    }
  }

  /// A timeout after `working`, with time left of the whole wait, is the agent's silence.
  private static func ended(by error: AgentProtocolError, working: Bool, whole: Deadline) -> AgentProtocolError {
    guard working, error == .timedOut, whole.remainingMilliseconds() > 0 else { return error }
    return .silentWhileWorking
  }

  /// How long a client waits for the agent's first frame: the agent answers from memory in
  /// about a millisecond and says `working` after a quarter of a second
  /// (`Agent.workingAfterMilliseconds`); three seconds leave room for a loaded machine,
  /// and are all a wedged agent costs a client before its direct path.
  public static let firstFrameMilliseconds: Int32 = 3000

  /// How long a client waits for the next frame once the agent said `working`: the agent
  /// says it again every second (`Agent.workingEveryMilliseconds`), so five seconds of
  /// nothing leave room for a loaded machine and still end the wait on an agent that
  /// stopped in the middle of a refresh long before the refresh's own limits would.
  public static let silenceMilliseconds: Int32 = 5000
}
