#if !hasFeature(Embedded)
  // Embedded, the front end is one module of these sources (Sources/tokenctl-front-end).
  import AgentWire
#endif

/// One question to the agent, as every client asks it (tokenctl-agent(1)): the request
/// with the client's group and context variables, and the answer if one came.
///
/// Any answer but a full one (no socket, nobody listening, a connection that breaks,
/// nothing within the first frame's wait) is nil, and costs no more than a failed
/// `connect` when no agent runs.
public struct AgentAsk: Sendable {
  public let socket: String
  /// The context variables' fields (`env-NAME`), in the order of their names.
  let contextFields: [AgentMessage.Field]
  /// What this client says it is (``programReport()``), for a forwarded host's prompt.
  let programField: AgentMessage.Field

  /// The longest a client waits for an answer: the agent may be refreshing, which has its
  /// own limits (the refresh lock's, twice the HTTP exchange's 30 s, and 15 s more); past
  /// this, something is wrong with the agent, and the client does the work itself.
  /// (The core's `HTTPTransportLimits`, which the front end does not link; a test checks
  /// the two agree.)
  public static let answerTimeoutMilliseconds: Int32 = (2 * 30 + 15) * 1000

  /// The group of a request that names none and runs without `TOKENCTL_GROUP`: the core's
  /// `Account.defaultGroup` (a test checks the two agree).
  public static let defaultGroup = "default"

  /// The variables a client reads to ask: whether to, where, and its context.
  public static let variables =
    ["TOKENCTL_AGENT", "TOKENCTL_LOG", "TOKENCTL_AGENT_SOCKET", "TOKENCTL_GROUP", "TOKENCTL_ACCOUNT"]
    + AgentMessage.contextVariables

  /// The question for this environment; nil when it asks for the direct path
  /// (`TOKENCTL_AGENT=0`), or for a debug log of the HTTP exchanges, which only the direct
  /// path can write to this process's standard error.
  public init?(environment: [String: String], socket: String) {
    self.init(socket: socket) { environment[$0] }
  }

  /// ``init(environment:socket:)`` with the environment's `variable` lookup (see
  /// AgentSocketLocation for why the front end has no dictionary).
  public init?(socket: String, _ variable: (String) -> String?) {
    guard !AgentSocketLocation.isDisabled(variable), variable("TOKENCTL_LOG") != "debug" else { return nil }
    self.socket = socket
    var fields: [AgentMessage.Field] = []
    for name in AgentMessage.contextVariables.sorted() {
      if let value = variable(name) { fields.append(.init(AgentMessage.contextField(name), value)) }
    }
    contextFields = fields
    programField = .init(AgentMessage.reportedProgramField, Self.programReport())
  }

  /// What came of a question.
  public enum Reply: Sendable, Equatable {
    case answer(AgentMessage)
    /// Nobody listens on the socket, or there is none: no agent runs.
    case noAgent
    /// An agent took the question but gave no answer in time, or the connection broke, or
    /// its listen queue is full (it takes no connection).
    case noAnswer
    /// The agent (`pid`, when known) said `working`, then nothing more in time: it stopped
    /// or hangs in the middle of a refresh, and may hold the account's refresh lock, which
    /// the direct path would wait for.
    case silentWhileWorking(pid: Int32?)

    public var answer: AgentMessage? {
      if case .answer(let message) = self { message } else { nil }
    }
  }

  /// Asks `kind` with `fields`, in `group`.
  public func ask(_ kind: String, group: String, _ fields: [AgentMessage.Field]) -> Reply {
    let connection: AgentConnection
    switch AgentConnection.open(path: socket) {
    case .connected(let opened): connection = opened
    case .noAgent: return .noAgent
    case .queueFull: return .noAnswer
    }
    let request = AgentMessage(kind, [.init("group", group)] + fields + contextFields + [programField])
    do {
      return .answer(try connection.exchange(request, timeoutMilliseconds: Self.answerTimeoutMilliseconds))
    } catch .silentWhileWorking {
      return .silentWhileWorking(pid: connection.peerPID)
    } catch {
      return .noAnswer
    }
  }
}
