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
      return finish(client.token(account: account, minValid: minValid, group: group), input: nil, output) {
        output.write(($0["access-token"] ?? "") + "\n")
        return ExitStatus.success.rawValue
      }
    case .credential(let operation, _):
      // Only `get` asks the agent; git's `store` and `erase` are the command's.
      guard operation == "get" else { return .notTaken }
      let input = StandardInput.readMessage(limit: CredentialMessage.maximumInputLength)
      let outcome = client.credential(input: input, account: environment["TOKENCTL_ACCOUNT"], group: group)
      return finish(outcome, input: input, output) {
        if let text = $0["answer"] { output.write(text) }
        return ExitStatus.success.rawValue
      }
    case .dockerGet:
      let input = StandardInput.readMessage(limit: CredentialMessage.maximumInputLength)
      let server = ClientCommand.dockerServer(input)
      // Refused before any lookup, as the direct path refuses it.
      guard CredentialMessage(requestFor: server) != nil else { return .direct(input: input) }
      let outcome = client.docker(server: server, account: environment["TOKENCTL_ACCOUNT"], group: group)
      return finish(outcome, input: input, output) { TokenCtl.DockerCredential.write($0["answer"], output: output) }
    case .cargoPlugin:
      // A conversation, which only the front end holds with the agent's help; run alone,
      // the full program answers it itself.
      return .notTaken
    case .kubeCredential(let server, _):
      let info = getenv(ExecCredential.variable).map { String(cString: $0) }
      let outcome = client.kube(server: server, execInfo: info, account: environment["TOKENCTL_ACCOUNT"], group: group)
      // No account serves it: the direct path says why, in its words.
      if case .answered(let answer, _, _) = outcome, answer["answer"] == nil { return .direct(input: nil) }
      return finish(outcome, input: nil, output) {
        output.write($0["answer"] ?? "")
        return ExitStatus.success.rawValue
      }
    }
  }

  /// What every command makes of the agent's outcome, in one place: an answer is printed
  /// (`print` returns the exit status) between the type files' warnings and the answer's
  /// own; an error is reported as the direct path reports it; no answer goes on to the
  /// direct path, with `input` when it was read here.
  private static func finish(
    _ outcome: AgentClient.Outcome?, input: [UInt8]?, _ output: StandardOutput, print: (AgentMessage) -> Int32
  ) -> Result {
    switch outcome {
    case .answered(let answer, let typeWarnings, let warnings):
      warn(typeWarnings, output)
      let status = print(answer)
      warn(warnings, output)
      return .done(status)
    case .failed(let error, let typeWarnings):
      return .done(report(error, typeWarnings: typeWarnings, output))
    case nil:
      return .direct(input: input)
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
