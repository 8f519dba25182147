import AgentFrontEnd
import AgentProtocol
import ArgumentParser
import BuiltinAccountTypes
import CredentialHelpers
import Testing

@testable import TokenCtlCLI

/// Each tool's protocol in one place on each side: the client's request and the answer it
/// prints are `ClientCommand`'s (the front end and the full program's fast path both call
/// it), and the agent's reading of that request is the tool's `ToolCredentialProtocol`. What
/// ties the two sides together, the request's kind and its field names, is checked here for
/// every command the agent is asked for.
@Suite struct CredentialProtocolTests {
  /// One command line the agent answers, as its program runs it (`arguments`) and as
  /// `ClientCommand` takes it, with what its client reads, and the host of the git request
  /// the agent makes of it (nil: `token`, which is no tool's).
  struct Sample: CustomTestStringConvertible, Sendable {
    var arguments: [String]
    var command: ClientCommand
    var input: String
    var environment: [String: String]
    var host: String?

    var testDescription: String { "\(command)" }
  }

  /// The cases of `ClientCommand`, each with its samples: a new case does not compile in
  /// ``init(_:)`` until it is named here, nor in ``samples`` until it has a sample.
  enum Case: CaseIterable {
    case token, credential, dockerGet, kubeCredential, cargoPlugin

    init(_ command: ClientCommand) {
      switch command {
      case .token: self = .token
      case .credential: self = .credential
      case .dockerGet: self = .dockerGet
      case .kubeCredential: self = .kubeCredential
      case .cargoPlugin: self = .cargoPlugin
      }
    }

    var samples: [Sample] {
      switch self {
      case .token:
        [
          Sample(
            arguments: ["token", "graph:ada", "--min-valid", "120"],
            command: .token(account: "graph:ada", minValid: 120, group: nil), input: "", environment: [:], host: nil)
        ]
      case .credential:
        [
          Sample(
            arguments: ["credential", "get"], command: .credential(operation: "get", group: nil),
            input: "protocol=https\nhost=git.example.org\n\n", environment: ["TOKENCTL_ACCOUNT": "github:ada"],
            host: "git.example.org")
        ]
      case .dockerGet:
        [
          Sample(
            arguments: ["docker-credential", "get", "--group", "work"], command: .dockerGet(group: "work"),
            input: "registry.example.org\n", environment: [:], host: "registry.example.org")
        ]
      case .kubeCredential:
        [
          Sample(
            arguments: ["kube-credential", "--server", "https://k8s.example.org"],
            command: .kubeCredential(server: "https://k8s.example.org", group: nil), input: "", environment: [:],
            host: "k8s.example.org"),
          Sample(
            arguments: ["kube-credential"], command: .kubeCredential(server: nil, group: nil), input: "",
            environment: [
              "KUBERNETES_EXEC_INFO":
                #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","#
                + #""spec":{"cluster":{"server":"https://cluster.example.org"}}}"#
            ],
            host: "cluster.example.org"),
        ]
      case .cargoPlugin:
        [
          Sample(
            arguments: ["--cargo-plugin"], command: .cargoPlugin,
            input: #"{"v":1,"registry":{"index-url":"sparse+https://cargo.example.org/index/"},"kind":"get"}"#,
            environment: ["TOKENCTL_ACCOUNT": "gitea:ada"], host: "cargo.example.org")
        ]
      }
    }
  }

  static let samples = Case.allCases.flatMap(\.samples)

  @Test func everyCaseHasItsOwnSamples() {
    for kind in Case.allCases {
      #expect(!kind.samples.isEmpty, "\(kind)")
      for sample in kind.samples { #expect(Case(sample.command) == kind, "\(sample.command)") }
    }
  }

  /// The request a client sends is one the agent answers, reading the fields the client
  /// wrote: the tool's protocol turns them into git's request for the tool's server.
  @Test(arguments: samples)
  func theAgentReadsTheRequestTheClientBuilds(sample: Sample) throws {
    let request = try #require(
      sample.command.agentRequest(input: Array(sample.input.utf8)) { sample.environment[$0] })
    let message = AgentMessage(request.kind, request.fields)
    guard let host = sample.host else {
      #expect(request.kind == AgentMessage.Request.token)
      #expect(message["account"] == "graph:ada" && message["min-valid"] == "120")
      return
    }
    let tools = BuiltinPlugins.credentialProtocols.filter { $0.requestKind == request.kind }
    try #require(tools.count == 1, "\(request.kind) is answered by \(tools.count) protocols")
    let question = try #require(tools[0].question { message[$0] }, "\(request.fields)")
    #expect(question.message["host"] == host)
    #expect(message["account"] == sample.environment["TOKENCTL_ACCOUNT"])
  }

  /// Every protocol the agent answers is one some command asks, once.
  @Test func everyProtocolTheAgentAnswersIsAsked() {
    let kinds = BuiltinPlugins.credentialProtocols.map { $0.requestKind }
    #expect(Set(kinds).count == kinds.count)
    let asked = Set(
      Self.samples.compactMap { sample in
        sample.command.agentRequest(input: Array(sample.input.utf8)) { sample.environment[$0] }?.kind
      })
    #expect(Set(kinds).isSubset(of: asked), "\(Set(kinds).subtracting(asked))")
  }

  /// The tools whose helper is no plain one, each with its own command.
  static let ownCommands: [(tool: any ToolCredentialProtocol.Type, command: any ParsableCommand.Type)] = [
    (GitCredentials.self, TokenCtl.Credential.self), (DockerCredentials.self, TokenCtl.DockerCredential.self),
    (CargoCredentialRequest.self, TokenCtl.CargoCredential.self),
  ]

  /// The command `tokenctl` runs for `tool`'s helper: the plain one, or the tool's own.
  static func command<Tool: ToolCredentialProtocol>(for tool: Tool.Type) -> (any ParsableCommand.Type)? {
    if Tool.commandLine != nil { return TokenCtl.ToolCredential<Tool>.self }
    return ownCommands.first { $0.tool == tool }?.command
  }

  /// Every protocol the agent answers has a command among `tokenctl`'s subcommands, under
  /// its name, so that the full program answers what the agent leaves to it.
  @Test func everyProtocolTheAgentAnswersHasACommand() throws {
    let subcommands = TokenCtl.configuration.subcommands
    for tool in BuiltinPlugins.credentialProtocols {
      let found = Self.command(for: tool)
      let command = try #require(found, "\(tool) has no commandLine and no command of its own")
      #expect(subcommands.contains { $0 == command }, "\(command)")
      if let commandLine = tool.commandLine { #expect(command.configuration.commandName == commandLine.name) }
    }
  }

  /// A tool's command line is one command to every reader of it: `ClientCommand` (the front
  /// end, the fast path), the protocol the agent answers its request with, and the parser,
  /// which gives it to that protocol's command.
  @Test(arguments: samples)
  func theFrontEndAndTheParserTakeTheSameCommandLine(sample: Sample) throws {
    #expect(ClientCommand(sample.arguments) == sample.command)
    let parsed = try TokenCtl.parseAsRoot(TokenCtl.asCargoRunsIt(sample.arguments))
    guard sample.host != nil else {
      #expect(parsed is TokenCtl.Token)
      return
    }
    let request = try #require(
      sample.command.agentRequest(input: Array(sample.input.utf8)) { sample.environment[$0] })
    let tool = try #require(BuiltinPlugins.credentialProtocols.first { $0.requestKind == request.kind })
    let command = Self.command(for: tool)
    #expect(command == type(of: parsed), "\(type(of: parsed)) is not \(tool)'s command")
  }

  /// What the agent writes as a tool's answer is what the command prints, and a tool's
  /// "none" is the tool's own: nothing for git, Docker's words and exit 1; kubectl's is the
  /// full program's to word.
  @Test func eachToolPrintsTheAgentsAnswerAsItCame() {
    /// The exit status and the text printed.
    func printed(_ command: ClientCommand, _ answer: AgentMessage) -> String? {
      command.output(for: answer).map { "\($0.status) \($0.text)" }
    }
    let answered = AgentMessage(AgentMessage.Answer.credential, [.init("answer", "ANSWER\n")])
    let none = AgentMessage(AgentMessage.Answer.credential)
    for sample in Self.samples where sample.host != nil {
      #expect(printed(sample.command, answered) == "0 ANSWER\n", "\(sample.command)")
      #expect(sample.command.output(for: AgentMessage(AgentMessage.Answer.direct)) == nil)
    }
    #expect(printed(.credential(operation: "get", group: nil), none) == "0 ")
    #expect(printed(.dockerGet(group: nil), none) == "1 \(DockerCredentials.notFound)\n")
    #expect(ClientCommand.kubeCredential(server: nil, group: nil).output(for: none) == nil)
    let tokenCommand = ClientCommand.token(account: "graph:ada", minValid: nil, group: nil)
    let token = AgentMessage(AgentMessage.Answer.token, [.init("access-token", "T")])
    #expect(printed(tokenCommand, token) == "0 T\n")
    #expect(tokenCommand.output(for: answered) == nil)
    // A token for other scopes than the account's is the full program's (`token --scopes`).
    var scoped = token
    scoped.append("scopes", "other")
    #expect(tokenCommand.output(for: scoped) == nil)
  }

  /// git's other operations ask nothing, and a request of git's with a password in its URL
  /// never leaves the process.
  @Test func whatIsNotSentIsNotBuilt() {
    #expect(ClientCommand.credential(operation: "store", group: nil).agentRequest(input: []) { _ in nil } == nil)
    let withPassword = Array("url=https://ada:secret@git.example.org/\n\n".utf8)
    #expect(
      ClientCommand.credential(operation: "get", group: nil).agentRequest(input: withPassword) { _ in nil } == nil)
  }
}
