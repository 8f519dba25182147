import AgentFrontEnd
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
  /// How a request is put to the agent: the front end's way (``AgentAsk``), shared.
  let asker: AgentAsk
  /// The answer the front end got already (``FrontEnd/HandOver``): the first question is
  /// answered with it rather than asked again.
  let handedOver: AgentMessage?

  var socket: String { asker.socket }

  /// The client for this environment; nil when it asks for the direct path
  /// (`TOKENCTL_AGENT=0`), or for a debug log of the HTTP exchanges, which only the direct
  /// path can write to this process's standard error.
  init?(environment: [String: String], handedOver: AgentMessage? = nil) {
    guard let asker = AgentAsk(environment: environment, socket: AgentSocketLocation.path(environment: environment))
    else { return nil }
    self.asker = asker
    self.handedOver = handedOver
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
    let reply = handedOver.map { AgentAsk.Reply.answer($0) } ?? asker.ask(kind, group: group, fields)
    if case .silentWhileWorking(let pid) = reply {
      return .failed(Self.silentWhileWorking(pid: pid), typeWarnings: [])
    }
    guard let answer = reply.answer else { return nil }
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

  /// The error of an agent (`pid`, when known) that said `working` and then went silent.
  ///
  /// The direct path is no way out: the agent may hold the account's refresh lock, which
  /// the direct path would wait for, a minute or more, in vain while the agent is stopped.
  /// What the user can do is resume the agent, or end it, which frees the lock.
  static func silentWhileWorking(pid: Int32?) -> TokenKitError {
    let agent = pid.map { "the agent (pid \($0))" } ?? "the agent"
    let seconds = AgentConnection.silenceMilliseconds / 1000
    let recovery =
      pid.map {
        "If it is stopped, resume it with `kill -CONT \($0)`; if it hangs, end it with `kill -KILL \($0)`; "
          + "then run this command again."
      } ?? "Resume the agent if it is stopped, or end it, then run this command again."
    return TokenKitError(
      .agentFailure,
      "\(agent) said it was refreshing, then nothing for \(seconds) seconds: it is stopped or hangs, "
        + "and may hold the account's refresh lock",
      recovery: recovery)
  }

  /// Asks `command`'s `request` (``ClientCommand/agentRequest(input:_:)``); nil as well for
  /// an answer the command does not print (``ClientCommand/output(for:)``), which the direct
  /// path words.
  func ask(_ request: ClientCommand.AgentRequest, for command: ClientCommand, group: String) -> Outcome? {
    guard let outcome = ask(request.kind, group: group, request.fields) else { return nil }
    if case .answered(let answer, _, _) = outcome, command.output(for: answer) == nil { return nil }
    return outcome
  }

  /// The access token `account` names, as `tokenctl token` prints it; with `scopes`, the
  /// token for those scopes.
  func token(account: String, minValid: Int?, scopes: ScopeSet? = nil, group: String) -> Outcome? {
    let command = ClientCommand.token(account: account, minValid: minValid, group: nil)
    guard var request = command.agentRequest(input: [], { _ in nil }) else { return nil }
    if let scopes { request.fields.append(.init("scopes", scopes.text)) }
    guard let outcome = ask(request.kind, group: group, request.fields) else { return nil }
    if case .answered(let answer, _, _) = outcome,
      answer.kind != AgentMessage.Answer.token || answer["access-token"] == nil
        || answer["scopes"] != scopes?.text
    {
      return nil
    }
    return outcome
  }

  /// git's `get` for `input`, the request as git wrote it, of which the agent is sent only
  /// what it reads (``CredentialInput``); nil as well for input the direct path judges.
  /// `variable` is the environment (`TOKENCTL_ACCOUNT`).
  func credential(input: [UInt8], group: String, _ variable: (String) -> String?) -> Outcome? {
    let command = ClientCommand.credential(operation: "get", group: nil)
    guard let request = command.agentRequest(input: input, variable) else { return nil }
    return ask(request, for: command, group: group)
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
