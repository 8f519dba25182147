/// A tool's credential protocol as the agent answers it: the kind of request a client sends
/// for it (tokenctl-agent(1)), the git request that request stands for, and git's answer in
/// the tool's words. Every tool's `get` is git's `get` for a URL, answered by the same host →
/// account rule (``CredentialHelper``); what differs is only how the tool names the URL and
/// how it reads the answer, which is what a conformance says.
///
/// The client's side of the same request, its fields and the answer it expects, is
/// AgentFrontEnd's `ClientCommand`, which the front end compiles without this module; a test
/// checks that each of its requests is one a conformance answers.
///
/// `SendableMetatype`: the agent's threads share the list of them.
public protocol ToolCredentialProtocol: SendableMetatype {
  /// The agent request's kind.
  static var requestKind: String { get }

  /// git's request for the agent request whose fields `field` reads, and how its answer is
  /// written; nil for a request the command line refuses, in its own words.
  static func question(_ field: (String) -> String?) -> ToolQuestion?

  /// Whether a forwarded host, which has no direct path, is told that nothing serves a
  /// request the agent leaves to the client (`direct`), so that its tool goes on without
  /// credentials; false when such a request is one only the local machine answers.
  static var directMeansNone: Bool { get }

  /// The tool's helper as a plain command of tokenctl's command line, which answers without
  /// the agent; nil when the command line has a command of its own for the tool (git's
  /// operations, Docker's program and operations, cargo's conversation).
  static var commandLine: ToolCommandLine? { get }
}

extension ToolCredentialProtocol {
  public static var directMeansNone: Bool { true }

  public static var commandLine: ToolCommandLine? { nil }
}

/// A tool's helper as a plain command of tokenctl's: run once for each request, told the
/// server by `--server` or in the tool's environment, and answered as the agent answers the
/// same request, through ``ToolCredentialProtocol/question(_:)``. The command line's one
/// command for such tools takes its name, its help and its refusals from here, and the
/// request's fields as the client sends them to the agent, so that a tool of this kind needs
/// no command of its own.
public struct ToolCommandLine: Sendable {
  /// The command's name, as the tool's configuration runs it.
  public var name: String
  /// The command's summary and description, for its help and its man page.
  public var abstract: String
  public var discussion: String
  /// What `--server URL` is for, in the command's help.
  public var serverHelp: String
  /// The variables the tool passes its request in, each with the request's field it fills.
  public var environment: [String: String]
  /// The server the request's fields name, URL or not; nil when they name none.
  public var server: @Sendable ((String) -> String?) -> String?
  /// The refusal of a request that names no server, and what to change.
  public var noServer: String
  public var noServerRecovery: String
  /// What a server given is not when it is no URL ("an API server URL").
  public var serverURL: String

  public init(
    name: String, abstract: String, discussion: String, serverHelp: String, environment: [String: String],
    server: @escaping @Sendable ((String) -> String?) -> String?, noServer: String, noServerRecovery: String,
    serverURL: String
  ) {
    self.name = name
    self.abstract = abstract
    self.discussion = discussion
    self.serverHelp = serverHelp
    self.environment = environment
    self.server = server
    self.noServer = noServer
    self.noServerRecovery = noServerRecovery
    self.serverURL = serverURL
  }
}

/// What a tool's request asks of git's helper, and how the answer is written back.
public struct ToolQuestion {
  /// git's request: the tool's server as a URL.
  public var message: CredentialMessage
  /// The text of the agent's `answer` field from git's answer (nil: no account answered);
  /// nil leaves the field out. Throws for an answer the tool cannot take.
  public var write: (CredentialMessage?) throws -> String?

  public init(_ message: CredentialMessage, write: @escaping (CredentialMessage?) throws -> String?) {
    self.message = message
    self.write = write
  }
}
