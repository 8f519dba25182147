import AgentFrontEnd
import AgentProtocol
import GitCredentialHelper
import NativeAppSupport
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The agent's answer to `token`, git's `get` and Docker's `get`, before anything else starts: no
/// environment table, no registry, no parser, no keyring library. This is what makes a
/// client of the agent start and end in a few milliseconds and a few MiB.
///
/// Only command lines whose meaning is certain are taken: `token ACCOUNT` with at most
/// `--min-valid N` and `--group G` (as separate words), and `credential get` with at most
/// `--group G`. A full answer is written here; an error is reported by the same code as
/// the direct path's; anything else goes on to the direct path, handing it git's request
/// when this already read it.
enum AgentFastPath {
  enum Result {
    /// Answered: exit with this status.
    case done(Int32)
    /// Not a command line the fast path takes, or an environment that wants no agent.
    case notTaken
    /// The agent was asked and did not answer: do it the usual way without asking again;
    /// `input` is standard input when it was read here.
    case direct(input: [UInt8]?)
  }

  /// `handedOver`: the answer the front end got for this command line already.
  static func run(_ arguments: [String], handedOver: AgentMessage? = nil) -> Result {
    guard let command = ClientCommand(arguments) else { return .notTaken }
    var environment: [String: String] = [:]
    for name in AgentAsk.variables {
      if let value = getenv(name) { environment[name] = String(cString: value) }
    }
    guard let client = AgentClient(environment: environment, handedOver: handedOver) else { return .notTaken }
    let group = command.group ?? environment["TOKENCTL_GROUP"] ?? Account.defaultGroup
    guard !group.isEmpty else { return .notTaken }
    let output = StandardOutput()
    switch command {
    case .token(let account, let minValid, _):
      switch client.token(account: account, minValid: minValid, group: group) {
      case .answered(let answer, let typeWarnings, let warnings):
        warn(typeWarnings, output)
        output.write((answer["access-token"] ?? "") + "\n")
        warn(warnings, output)
        return .done(ExitStatus.success.rawValue)
      case .failed(let error, let typeWarnings):
        return .done(report(error, typeWarnings: typeWarnings, output))
      case nil:
        return .direct(input: nil)
      }
    case .credential(let operation, _):
      // Only `get` asks the agent; git's `store` and `erase` are the command's.
      guard operation == "get" else { return .notTaken }
      let input = StandardInput.readMessage(limit: CredentialMessage.maximumInputLength)
      switch client.credential(input: input, account: environment["TOKENCTL_ACCOUNT"], group: group) {
      case .answered(let answer, let typeWarnings, let warnings):
        warn(typeWarnings, output)
        if let text = answer["answer"] { output.write(text) }
        warn(warnings, output)
        return .done(ExitStatus.success.rawValue)
      case .failed(let error, let typeWarnings):
        return .done(report(error, typeWarnings: typeWarnings, output))
      case nil:
        return .direct(input: input)
      }
    case .dockerGet:
      let input = StandardInput.readMessage(limit: CredentialMessage.maximumInputLength)
      let server = ClientCommand.dockerServer(input)
      // Refused before any lookup, as the direct path refuses it.
      guard CredentialMessage(requestFor: server) != nil else { return .direct(input: input) }
      switch client.docker(server: server, account: environment["TOKENCTL_ACCOUNT"], group: group) {
      case .answered(let answer, let typeWarnings, let warnings):
        warn(typeWarnings, output)
        let status = TokenCtl.DockerCredential.write(answer["answer"], output: output)
        warn(warnings, output)
        return .done(status)
      case .failed(let error, let typeWarnings):
        return .done(report(error, typeWarnings: typeWarnings, output))
      case nil:
        return .direct(input: input)
      }
    case .cargoPlugin:
      // A conversation, which only the front end holds with the agent's help; run alone,
      // the full program answers it itself.
      return .notTaken
    case .kubeCredential(let server, _):
      let info = getenv(ExecCredential.variable).map { String(cString: $0) }
      switch client.kube(server: server, execInfo: info, account: environment["TOKENCTL_ACCOUNT"], group: group) {
      case .answered(let answer, let typeWarnings, let warnings):
        // No account serves it: the direct path says why, in its words.
        guard let json = answer["answer"] else { return .direct(input: nil) }
        warn(typeWarnings, output)
        output.write(json)
        warn(warnings, output)
        return .done(ExitStatus.success.rawValue)
      case .failed(let error, let typeWarnings):
        return .done(report(error, typeWarnings: typeWarnings, output))
      case nil:
        return .direct(input: nil)
      }
    }
  }

  private static func warn(_ warnings: [String], _ output: StandardOutput) {
    for warning in warnings { output.writeError("tokenctl: warning: \(TerminalSafe.text(warning))\n") }
  }

  /// Reports `error` as ``TokenCtl/main(arguments:context:shortcuts:)`` would, and returns its
  /// exit status. Rare enough to build what reporting needs only here.
  private static func report(_ error: TokenKitError, typeWarnings: [String], _ output: StandardOutput) -> Int32 {
    warn(typeWarnings, output)
    var environment: [String: String] = [:]
    if let value = getenv("NO_COLOR") { environment["NO_COLOR"] = String(cString: value) }
    guard let context = try? CLIContext.live(environment: environment) else {
      output.writeError("tokenctl: \(TerminalSafe.text(error.message))\n")
      return ExitStatus(for: error).rawValue
    }
    TokenCtl.report(error, context: context, json: false)
    return ExitStatus(for: error).rawValue
  }
}
