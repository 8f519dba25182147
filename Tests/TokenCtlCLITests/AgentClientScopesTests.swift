import AgentFrontEnd
import AgentProtocol
import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit

@testable import TokenCtlCLI

/// A token for other scopes is taken from the agent only when the agent says it heard the
/// scopes: an agent older than them ignores the field and answers with the account's own
/// token, which must never be printed for them. The fast path leaves such command lines
/// to the parser, whose command asks the agent with the scopes.
@Suite struct AgentClientScopesTests {
  /// Listens on `path`, answers one request with `answer`, and keeps the request.
  final class OneShotAgent: Sendable {
    private let listener: Int32
    private let received = Mutex<AgentMessage?>(nil)

    private init(path: String) throws {
      listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
      guard var address = AgentSocketIO.address(path), listener >= 0 else { throw TestFailure("no socket") }
      let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
      }
      guard bound == 0, listen(listener, 1) == 0 else { throw TestFailure("bind: \(String(cString: strerror(errno)))") }
    }

    static func start(path: String, answer: AgentMessage) throws -> OneShotAgent {
      let agent = try OneShotAgent(path: path)
      Thread { agent.serve(answer) }.start()
      return agent
    }

    private func serve(_ answer: AgentMessage) {
      let connection = accept(listener, nil, nil)
      guard connection >= 0 else { return }
      defer { close(connection) }
      let request = try? AgentSocketIO.readMessage(
        from: connection, limit: AgentMessage.maximumRequestSize, timeoutMilliseconds: 10_000)
      received.withLock { $0 = request }
      try? AgentSocketIO.writeMessage(answer, to: connection, timeoutMilliseconds: 10_000)
    }

    var request: AgentMessage? { received.withLock { $0 } }

    deinit { close(listener) }
  }

  @Test(arguments: [
    ["token", "local:ada", "--scope", "read"], ["token", "--scope", "read", "local:ada"],
    ["token", "local:ada", "--scope=read"], ["token", "local:ada", "--min-valid", "60", "--scope", "read write"],
  ])
  func theFastPathLeavesScopesToTheParser(arguments: [String]) {
    #expect(ClientCommand(arguments) == nil)
    #expect(TokenCtl.Shortcut(arguments) == nil)
  }

  static func client(_ path: String) throws -> AgentClient {
    try #require(AgentClient(environment: ["TOKENCTL_AGENT_SOCKET": path]))
  }

  @Test func anAnswerWithoutTheScopesIsNotTaken() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("agent.sock")
    let agent = try OneShotAgent.start(
      path: path, answer: AgentMessage(AgentMessage.Answer.token, [.init("access-token", "own-token")]))
    let read = try #require(ScopeSet(["read"]))
    let outcome = try Self.client(path).token(account: "local:ada", minValid: nil, scopes: read, group: "default")
    #expect(outcome == nil, "the client does it itself")
    #expect(agent.request?["scopes"] == "read")
  }

  @Test func anAnswerForTheScopesIsTaken() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("agent.sock")
    let agent = try OneShotAgent.start(
      path: path,
      answer: AgentMessage(AgentMessage.Answer.token, [.init("access-token", "read-token"), .init("scopes", "read")]))
    let read = try #require(ScopeSet(["read"]))
    let outcome = try Self.client(path).token(account: "local:ada", minValid: nil, scopes: read, group: "default")
    guard case .answered(let answer, _, _) = outcome else {
      Issue.record("not answered: \(String(describing: outcome))")
      return
    }
    #expect(answer["access-token"] == "read-token")
    #expect(agent.request?["account"] == "local:ada")
  }
}

/// An agent whose own way to the keyring broke (its session bus restarted under it) does
/// not speak for this process's: the client takes its direct path. Any
/// other error of the agent is the answer, as the direct path would give it.
@Suite struct AgentClientKeyringTests {
  @Test func anAgentWhoseKeyringIsUnavailableLeavesTheRequestToTheClient() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("agent.sock")
    _ = try AgentClientScopesTests.OneShotAgent.start(
      path: path,
      answer: AgentMessage(error: TokenKitError(.keyringUnavailable, "The connection is closed")))
    let outcome = try AgentClientScopesTests.client(path).token(account: "local:ada", minValid: nil, group: "default")
    #expect(outcome == nil, "the client does it itself")
  }

  @Test func anotherErrorOfTheAgentIsTheAnswer() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("agent.sock")
    _ = try AgentClientScopesTests.OneShotAgent.start(
      path: path, answer: AgentMessage(error: TokenKitError(.keyringLocked, "the keyring is locked")))
    let outcome = try AgentClientScopesTests.client(path).token(account: "local:ada", minValid: nil, group: "default")
    guard case .failed(let error, _) = outcome else {
      Issue.record("not the agent's error: \(String(describing: outcome))")
      return
    }
    #expect(error.code == .keyringLocked)
  }
}
