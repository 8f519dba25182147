import Testing
import TokenKit

@testable import TokenCtlRuntime

/// The refresh child's arguments, as the parent writes them and as the agent's own
/// executable, which has no command line parser, reads them back.
@Suite struct RefreshChildArgumentsTests {
  @Test func whatTheParentWritesIsReadBack() throws {
    let key = AccountKey(type: "corp", id: "id with spaces=and--dashes")
    let plain = RefreshChild.arguments(refreshing: key, group: "shared")
    let read = try #require(RefreshChild.request(from: plain))
    #expect(read.key == key && read.group == "shared" && read.scopes == nil)
    let scopes = try #require(ScopeSet(parsing: "openid profile"))
    let scoped = try #require(
      RefreshChild.request(from: RefreshChild.arguments(refreshing: key, group: "g", scopes: scopes)))
    #expect(scoped.scopes == scopes.text)
  }

  @Test(arguments: [
    [],
    ["--no-dbus"],
    ["_refresh-worker", "--group", "g", "--type", "t"],
    ["_refresh-worker", "--group", "g", "--type", "t", "--id"],
    ["_refresh-worker", "--group", "g", "--type", "t", "--id", "i", "--group", "h"],
    ["_refresh-worker", "--group", "g", "--type", "t", "--id", "i", "--verbose", "x"],
  ])
  func anythingElseIsNotARefreshChild(_ arguments: [String]) {
    #expect(RefreshChild.request(from: arguments) == nil)
  }
}
