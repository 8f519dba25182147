import AgentFrontEnd
import ApplicationConsent
import Testing
import TokenKit

@testable import TokenCtlCLI

/// The rules of forwarding that need no ssh: how `tokenctl ssh` reads ssh's command line,
/// which host names consent takes, and the front end's copy of the exit statuses it gives
/// alone on a remote host.
@Suite struct ForwardingRulesTests {
  @Test(arguments: [
    (["build1"], [], "build1", []),
    (["-p", "2222", "me@build1", "git", "pull"], ["-p", "2222"], "me@build1", ["git", "pull"]),
    (["-p2222", "-A", "build1"], ["-p2222", "-A"], "build1", []),
    (["-tq", "-oBatchMode=yes", "build1", "ls"], ["-tq", "-oBatchMode=yes"], "build1", ["ls"]),
    (["-vi", "key", "--", "build1", "-x"], ["-vi", "key"], "build1", ["-x"]),
  ])
  func sshsCommandLineIsReadAsSshReadsIt(
    arguments: [String], options: [String], destination: String, command: [String]
  ) throws {
    let line = try SshCommandLine(arguments)
    #expect(line.options == options)
    #expect(line.destination == destination)
    #expect(line.command == command)
  }

  @Test func aCommandLineWithoutADestinationIsRefused() {
    #expect(throws: (any Error).self) { try SshCommandLine(["-p", "22"]) }
    #expect(throws: (any Error).self) { try SshCommandLine(["-p"]) }
  }

  @Test func onlyASessionWithoutACommandGetsATerminal() throws {
    #expect(try SshCommandLine(["build1"]).wantsTerminal)
    #expect(try !SshCommandLine(["build1", "ls"]).wantsTerminal)
    #expect(try !SshCommandLine(["-T", "build1"]).wantsTerminal)
    #expect(try SshCommandLine(["-o", "Tag=x", "build1"]).wantsTerminal)
  }

  @Test func hostNamesAreLowercasedAndPlain() {
    #expect(HostName("Build1.Example.ORG")?.rawValue == "build1.example.org")
    #expect(HostName("127.0.0.1")?.rawValue == "127.0.0.1")
    #expect(HostName("::1")?.rawValue == "::1")
    for bad in ["", "-oProxyCommand=x", ".hidden", "a b", "host\u{1B}[31m", "höst", String(repeating: "a", count: 254)]
    {
      #expect(HostName(bad) == nil, "\(bad)")
    }
    #expect(ApplicationIdentity(name: "host:build1") == .host(HostName("build1")!))
    #expect(ApplicationIdentity(name: "host:") == nil)
    #expect(ApplicationIdentity.host(HostName("build1")!).name == "host:build1")
  }

  /// The front end links no core: its table must give what the full program gives.
  @Test func theFrontEndsExitStatusesAreTheFullPrograms() {
    let codes: [TokenKitError.Code] = [
      .noSuchAccount, .ambiguousAccount, .unknownAccountType, .duplicateAccountType, .invalidDescriptor,
      .tokenNotValid, .keyringLocked, .keyringUnavailable, .corruptItem, .storeFailure, .unusableFile,
      .invalidArgument, .agentFailure, .internalFailure, .notConfigured, .signInFailed, .signInTimedOut,
      .accessDenied, .needsSignIn, .serverError, .networkFailure, .invalidIDToken, .revocationFailed, .scopeRefused,
    ]
    for code in codes {
      let error = TokenKitError(code, "x")
      #expect(FrontEnd.exitStatus(code: code.description) == ExitStatus(for: error).rawValue, "\(code)")
    }
  }
}
