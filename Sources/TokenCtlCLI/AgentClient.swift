import AgentProtocol
import TokenAgent
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The command line's side of the agent (tokenctl-agent(1)): `token`, `list` and git's
/// `get` ask it first, and do the work themselves when it does not answer.
///
/// Any answer but a full one (no socket, nobody listening, a connection that breaks, an
/// answer of `direct`, a malformed one, the agent's keyring unavailable) means "do it
/// yourself", and costs no more than a
/// failed `connect` when no agent runs. The agent's errors are the core's errors, reported
/// by the same code as the direct path's.
struct AgentClient: Sendable {
  let socket: String
  let context: [String: String]

  /// The longest a client waits for an answer: the agent may be refreshing, which has its
  /// own limits (the lock's and the HTTP exchange's); past this, something is wrong with
  /// the agent, and the client does the work itself.
  static let answerTimeoutMilliseconds: Int32 = Int32(2 * HTTPTransportLimits.totalTimeoutSeconds + 15) * 1000

  /// The client for this environment; nil when it asks for the direct path
  /// (`TOKENCTL_AGENT=0`), or for a debug log of the HTTP exchanges, which only the direct
  /// path can write to this process's standard error.
  init?(environment: [String: String]) {
    guard !AgentSocketLocation.isDisabled(environment: environment), environment["TOKENCTL_LOG"] != "debug" else {
      return nil
    }
    socket = AgentSocketLocation.path(environment: environment)
    var context: [String: String] = [:]
    for name in AgentMessage.contextVariables { context[name] = environment[name] }
    self.context = context
  }

  /// What the agent said, when it said something the client can use.
  enum Outcome {
    /// A full answer; `typeWarnings` are the type files the agent skipped, as the direct
    /// path warns of them; `warnings`, what failed without stopping the request.
    case answered(AgentMessage, typeWarnings: [String], warnings: [String])
    /// The core's error, to report as the direct path reports it.
    case failed(TokenKitError, typeWarnings: [String])
  }

  /// Asks `kind` with `fields`, in `group`; nil: do it yourself.
  func ask(_ kind: String, group: String, _ fields: [AgentMessage.Field]) -> Outcome? {
    guard let connection = AgentConnection(path: socket) else { return nil }
    var request = AgentMessage(kind, [.init("group", group)] + fields)
    for (name, value) in context.sorted(by: { $0.key < $1.key }) {
      request.append(AgentMessage.contextField(name), value)
    }
    guard let answer = try? connection.exchange(request, timeoutMilliseconds: Self.answerTimeoutMilliseconds) else {
      return nil
    }
    let typeWarnings = answer.values("type-warning")
    if answer.kind == AgentMessage.Answer.error {
      // The agent's own way to the keyring is broken (its session bus restarted under it,
      // say), which says nothing of this process's: it tries for itself.
      guard let error = answer.error, error.code != .keyringUnavailable else { return nil }
      return .failed(error, typeWarnings: typeWarnings)
    }
    guard answer.kind != AgentMessage.Answer.direct, answer.kind != "refused" else { return nil }
    return .answered(answer, typeWarnings: typeWarnings, warnings: answer.values("warning"))
  }

  /// The access token `account` names, as `tokenctl token` prints it; with `scopes`, the
  /// token for those scopes.
  func token(account: String, minValid: Int?, scopes: ScopeSet? = nil, group: String) -> Outcome? {
    var fields = [AgentMessage.Field("account", account)]
    if let minValid { fields.append(.init("min-valid", "\(minValid)")) }
    if let scopes { fields.append(.init("scopes", scopes.text)) }
    guard let outcome = ask(AgentMessage.Request.token, group: group, fields) else { return nil }
    if case .answered(let answer, _, _) = outcome,
      answer.kind != AgentMessage.Answer.token || answer["access-token"] == nil
        || answer["scopes"] != scopes?.text
    {
      return nil
    }
    return outcome
  }

  /// git's `get` for `input`, the request as git wrote it; nil as well for input that is
  /// not text, which the direct path judges.
  func credential(input: [UInt8], account: String?, group: String) -> Outcome? {
    guard let text = String(validating: input, as: UTF8.self) else { return nil }
    var fields = [AgentMessage.Field("input", text)]
    if let account { fields.append(.init("account", account)) }
    guard let outcome = ask(AgentMessage.Request.credentialGet, group: group, fields) else { return nil }
    if case .answered(let answer, _, _) = outcome, answer.kind != AgentMessage.Answer.credential { return nil }
    return outcome
  }

  /// The accounts `tokenctl list` shows: an `accounts` answer whose records are well formed.
  func list(type: String?, group: String) -> Outcome? {
    let fields = type.map { [AgentMessage.Field("type", $0)] } ?? []
    guard let outcome = ask(AgentMessage.Request.list, group: group, fields) else { return nil }
    if case .answered(let answer, _, _) = outcome,
      answer.kind != AgentMessage.Answer.accounts || answer.accountRecords == nil
    {
      return nil
    }
    return outcome
  }
}
