import ArgumentParser
import CredentialHelpers
import TokenKit

extension TokenCtl {
  /// The command of a tool whose helper is a plain one (`Tool.commandLine`, such as
  /// `tokenctl kube-credential`): the tool's request, read as the agent reads it, answered by
  /// the same host → account rule as git's. `tokenctl` has one for each such protocol the
  /// agent answers (``TokenCtl/plainToolCommands``).
  struct ToolCredential<Tool: ToolCredentialProtocol>: AsyncParsableCommand {
    /// The tool's command line; only a tool that has one is given this command.
    static var commandLine: ToolCommandLine {
      guard let commandLine = Tool.commandLine else { preconditionFailure("\(Tool.self) has a command of its own") }
      return commandLine
    }

    static var configuration: CommandConfiguration {
      CommandConfiguration(
        commandName: commandLine.name, abstract: commandLine.abstract, discussion: commandLine.discussion)
    }

    @Option(help: ArgumentHelp(ToolCredential.commandLine.serverHelp, valueName: "url"))
    var server: String?

    @OptionGroup var groupOption: GroupOption

    func run() async throws {
      let commandLine = Self.commandLine
      let name = "tokenctl \(commandLine.name)"
      let session = try CommandSession.open(group: groupOption.group)
      let context = session.context
      // The request's fields as the client sends them (ClientCommand), so that the answer
      // is the agent's.
      var fields: [String: String] = [:]
      fields["server"] = server
      for (variable, field) in commandLine.environment { fields[field] = context.environment[variable] }
      let field = { (name: String) in fields[name] }
      guard let server = commandLine.server(field) else {
        throw TokenKitError(.notConfigured, commandLine.noServer, recovery: commandLine.noServerRecovery)
      }
      guard let question = Tool.question(field) else {
        throw ValidationError("'\(TerminalSafe.text(server))' is not \(commandLine.serverURL).")
      }
      guard let answer = try await Credential.fill(question.message, session: session, name: name),
        let text = try question.write(answer)
      else {
        // The tool has no next helper to ask: a host no type serves is said here. Otherwise
        // the helper said why on standard error, and what to run.
        if case .notOurs = try Credential.helper(session.configured(), name: name).choose(for: question.message) {
          throw Credential.noTypeServes(question.message, url: server)
        }
        throw ExitCode.failure
      }
      context.output.write(text)
    }
  }

  /// The commands of the tools whose helper is a plain one, in the order of
  /// `BuiltinPlugins.credentialProtocols`: a new tool of this kind is a protocol with its
  /// `commandLine`, and no command of the command line's.
  static var plainToolCommands: [any ParsableCommand.Type] {
    BuiltinPlugins.credentialProtocols.compactMap { command(for: $0) }
  }

  /// `tool`'s plain command, nil when it has a command of its own.
  private static func command<Tool: ToolCredentialProtocol>(for tool: Tool.Type) -> (any ParsableCommand.Type)? {
    Tool.commandLine == nil ? nil : ToolCredential<Tool>.self
  }
}
