import AgentProtocol
import Foundation
import TestSupport
import Testing
import TokenKit

@testable import TokenCtlCLI

/// Failures that are not the keyring's have exit statuses of their own, each in
/// the table `--help` and tokenctl(1) print. The cases of each are tested where their
/// command is (ConsentCommandTests, AgentIntegrationTests); these are the ones no other
/// suite reaches.
@Suite struct ExitStatusTests {
  /// An agent that cannot have its socket did not start: 19, whichever path it takes.
  @Test func anAgentWhoseSocketPathIsTooLongExits19() async throws {
    let home = try TemporaryDirectory()
    let socket = home.path(String(repeating: "s", count: 110) + "/agent.sock")
    var environment = ProcessInfo.processInfo.environment
    environment["HOME"] = home.url.path
    environment["XDG_RUNTIME_DIR"] = home.path("run")
    environment["TOKENCTL_AGENT_SOCKET"] = socket
    let result = try await TestProcess.run(
      TestProcess.tokenctl, ["agent", "run", "--no-dbus"], environment: environment)
    #expect(result.status == 19, "\(result.stderr)")
    #expect(result.stderr.contains("the agent's socket path is too long for a UNIX socket"), "\(result.stderr)")
  }

  /// Every status the error mapping gives is in the table, with its meaning.
  @Test(arguments: [
    (TokenKitError.Code.unusableFile, TokenCtlCLI.ExitStatus.unusableFile, "18  A local file or directory is unsafe"),
    (.agentFailure, .agentFailure, "19  The agent could not be started or stopped"),
    (.invalidArgument, .usage, "64  The command line is wrong"),
    (.internalFailure, .failure, "1   A failure not listed below"),
    (.storeFailure, .failure, "1   A failure not listed below"),
  ])
  func eachCodeHasADocumentedStatus(code: TokenKitError.Code, status: TokenCtlCLI.ExitStatus, line: String) {
    #expect(TokenCtlCLI.ExitStatus(for: TokenKitError(code, "it failed")) == status)
    #expect(TokenCtlCLI.ExitStatus.documentation.contains(line), "\(TokenCtlCLI.ExitStatus.documentation)")
  }

  /// The codes cross the agent's socket by name: the new ones arrive as themselves, and
  /// an agent from before them that says store-failure is still understood. (A name this
  /// client does not know makes no error: the client then does the work itself.)
  @Test(arguments: ["unusable-file", "invalid-argument", "agent-failure", "internal-failure", "store-failure"])
  func aCodeCrossesTheAgentsSocketByName(name: String) throws {
    let code = try #require(TokenKitError.Code(name: name))
    let frame = AgentMessage(error: TokenKitError(code, "it failed", recovery: "Try again.")).framed()
    let received = try AgentMessage(payload: frame.dropFirst(4))
    #expect(received["code"] == name)
    #expect(received.error == TokenKitError(code, "it failed", recovery: "Try again."))
    #expect(
      AgentMessage(AgentMessage.Answer.error, [.init("code", "from-a-newer-agent"), .init("message", "x")]).error == nil
    )
  }
}
