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
}

extension ToolCredentialProtocol {
  public static var directMeansNone: Bool { true }
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
