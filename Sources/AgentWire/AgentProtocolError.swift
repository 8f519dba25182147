#if !hasFeature(Embedded)
  // Embedded, the front end is one module of these sources (Sources/tokenctl-front-end).
  import SocketIO
#endif

/// Why a message could not be read or exchanged. None ever quotes a value: values may be
/// tokens.
public enum AgentProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The bytes are not a message of this protocol.
  case malformed(String)
  /// The peer speaks another version.
  case unsupportedVersion(Int)
  /// The frame announces more than the reader takes.
  case tooLarge(Int)
  /// The peer did not send or take the message in time.
  case timedOut
  /// The agent said `working`, then nothing more in time: it stopped, or hangs, in the
  /// middle of its work, where it may hold an account's refresh lock.
  case silentWhileWorking
  /// The connection failed or closed early (errno, or 0 for an early end).
  case connection(Int32)

  public var description: String {
    switch self {
    case .malformed(let why): "malformed agent message: \(why)"
    case .unsupportedVersion(let version):
      "the peer speaks agent protocol version \(version), not \(AgentMessage.version)"
    case .tooLarge(let size): "an agent message of \(size) bytes is over the limit"
    case .timedOut: "the agent connection timed out"
    case .silentWhileWorking: "the agent said it was working, then went silent"
    case .connection(0): "the agent connection closed early"
    case .connection(let code): "the agent connection failed (errno \(code))"
    }
  }
}

extension AgentProtocolError {
  /// A wait or write on the socket that ended early, in this protocol's terms.
  init(_ failure: SocketIO.Failure) {
    switch failure {
    case .timedOut: self = .timedOut
    case .failed(let code): self = .connection(code)
    }
  }
}
