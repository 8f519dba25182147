import AgentFrontEnd
import AgentProtocol
import CredentialHelpers
import NativeAppSupport
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The agent's answer to `token` and the tools' `get`, before anything else starts: no
/// environment table, no registry, no parser, no keyring library. This is what makes a
/// client of the agent start and end in a few milliseconds and a few MiB.
///
/// Only command lines whose meaning is certain are taken (``ClientCommand``, which also
/// builds each one's request and judges its answer, as for the front end). A full answer is
/// written here; an error is reported by the same code as the direct path's; anything else
/// goes on to the direct path, handing it the tool's request when this already read it.
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
    // A conversation, which only the front end holds with the agent's help; run alone, the
    // full program answers it itself.
    if case .cargoPlugin = command { return .notTaken }
    var environment: [String: String] = [:]
    for name in AgentAsk.variables {
      if let value = getenv(name) { environment[name] = String(cString: value) }
    }
    guard let client = AgentClient(environment: environment, handedOver: handedOver) else { return .notTaken }
    let group = command.group ?? environment["TOKENCTL_GROUP"] ?? Account.defaultGroup
    guard !group.isEmpty else { return .notTaken }
    // The request and the answer are the command's (ClientCommand), as the front end
    // builds and judges them.
    let input = command.readsRequest ? StandardInput.readMessage(limit: CredentialMessage.maximumInputLength) : nil
    guard let request = command.agentRequest(input: input ?? [], { getenv($0).map { String(cString: $0) } }) else {
      // git's `store` and `erase` are the command's; a request not to be sent, the direct
      // path's, with what was read.
      return input.map { .direct(input: $0) } ?? .notTaken
    }
    let output = StandardOutput()
    return finish(client.ask(request, for: command, group: group), input: input, output) {
      // Always one: the client keeps only answers the command prints.
      guard let printed = command.output(for: $0) else { return ExitStatus.success.rawValue }
      output.write(printed.text)
      return printed.status
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
