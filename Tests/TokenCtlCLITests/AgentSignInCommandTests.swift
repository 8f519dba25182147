import ArgumentParser
import Testing
import TokenAgent

@testable import TokenCtlCLI

/// What the agent's "Sign in" notification runs is a `login` of that account in
/// that group, as the parser reads it: a name with spaces or a leading dash stays one
/// argument, never an option.
@Suite struct AgentSignInCommandTests {
  @Test(arguments: [("gitlab:ada", "work"), ("graph:ada@contoso.com", "default"), ("corp:Ada Lovelace", "a b")])
  func theSignInIsALoginOfThatAccountInThatGroup(account: String, group: String) throws {
    let arguments = AgentLaunch.signInArguments(account: account, group: group)
    let login = try #require(try TokenCtl.parseAsRoot(arguments) as? TokenCtl.Login)
    #expect(login.type == account)
    #expect(login.groupOption.group == group)
  }
}
