import CredentialHelpers
import Foundation
import Synchronization
import Testing
import TokenKit

/// The helper's side of the store: which keyring reads each request costs, and what `get`
/// and `erase` do with the chooser's answer.
@Suite struct CredentialHelperTests {
  typealias F = ChooserFixtures

  static func registry() throws -> AccountTypeRegistry {
    let server = EndpointConfiguration.fixed(
      Endpoints(
        authorization: URL(string: "https://auth.example/authorize"), token: URL(string: "https://auth.example/token")!)
    )
    var registry = AccountTypeRegistry()
    for (id, git) in [
      ("github", GitIntegration(hosts: ["github.com"], username: .literal("oauth2"))),
      ("gitlab", GitIntegration(hosts: ["gitlab.com"], username: .literal("oauth2"))),
      ("corp", GitIntegration(hosts: ["git.corp.example"], username: .accountName, bearer: true)),
      ("graph", nil),
    ] as [(String, GitIntegration?)] {
      try registry.register(EndpointDescriptor(id: id, displayName: id, endpoints: server, git: git), source: "test")
    }
    try registry.register(
      EndpointDescriptor(
        id: "gitea", displayName: "gitea", endpoints: .discoveredFromUserIssuer,
        git: GitIntegration(hosts: [], username: .literal("oauth2"))),
      source: "test")
    return registry
  }

  static func stored(_ account: Account, access: String = "ACCESS", expiresIn: Double = 3600) -> StoredAccount {
    StoredAccount(
      account: account,
      tokens: TokenSet(accessToken: access, refreshToken: "REFRESH", expiresAt: F.now.addingTimeInterval(expiresIn)))
  }

  static let accounts = [
    stored(F.account("github", "1", "ada"), access: "ADA"),
    stored(F.account("github", "2", "grace"), access: "GRACE"),
    stored(F.account("gitlab", "3", "ada")),
    stored(F.account("gitea", "g1", "ada", issuer: "https://codeberg.org/")),
    stored(F.account("corp", "5", "ada")),
  ]

  /// What `explain` heard.
  final class Explanations: Sendable {
    private let heard = Mutex<[CredentialDecline]>([])
    var all: [CredentialDecline] { heard.withLock { $0 } }
    @Sendable func callAsFunction(_ decline: CredentialDecline) { heard.withLock { $0.append(decline) } }
  }

  static func helper(
    _ store: RecordingTokenStore, environment: [String: String] = [:], rules: [String: String] = [:],
    explain: Explanations = Explanations()
  ) throws -> CredentialHelper {
    CredentialHelper(
      registry: try registry(), store: store, environment: environment, rules: rules, clock: FixedClock(F.now),
      locks: NoRefreshInFlight(), explain: { explain($0) })
  }

  static func message(_ text: String) throws -> CredentialMessage { try CredentialMessage.parse(Array(text.utf8)) }

  @Test(
    arguments: [
      // A host a type lists: one search, which brings the tokens along.
      (nil, "protocol=https\nhost=github.com\nusername=ada\n", "account github:1 with tokens", ["loadAll type=github"]),
      (nil, "protocol=https\nhost=github.com\n", "ambiguous on github.com: github:1,github:2", ["loadAll type=github"]),
      (nil, "protocol=https\nhost=gitlab.com\n", "account gitlab:3 with tokens", ["loadAll type=gitlab"]),
      (nil, "protocol=https\nhost=git.corp.example\n", "account corp:5 with tokens", ["loadAll type=corp"]),
      // A named account is looked up alone: by name, then by id.
      ("github:grace", "protocol=https\nhost=github.com\n", "account github:2", ["list type=github name=grace"]),
      (
        "github:2", "protocol=https\nhost=github.com\n", "account github:2",
        ["list type=github name=2", "list type=github id=2"]
      ),
      (
        "github:nobody", "protocol=https\nhost=github.com\n", "not signed in: github:nobody by TOKENCTL_ACCOUNT",
        ["list type=github name=nobody", "list type=github id=nobody"]
      ),
      (
        "gitlab:ada", "protocol=https\nhost=github.com\n", "gitlab:3 by TOKENCTL_ACCOUNT does not serve github.com",
        ["list type=gitlab name=ada"]
      ),
      (
        nil, "protocol=https\nhost=github.com\npath=acme/app.git\n", "account github:2",
        ["list type=github name=grace"]
      ),
      // A host no type lists: the accounts of the types without hosts say whether it is ours.
      (nil, "protocol=https\nhost=codeberg.org\n", "account gitea:g1", ["list type=gitea"]),
      (
        "gitea:g1", "protocol=https\nhost=codeberg.org\n", "account gitea:g1",
        ["list type=gitea", "list type=gitea name=g1", "list type=gitea id=g1"]
      ),
      (nil, "protocol=https\nhost=example.org\n", "not ours", ["list type=gitea"]),
      (nil, "protocol=ssh\nhost=github.com\n", "not ours", ["list type=gitea"]),
      (nil, "protocol=http\nhost=github.com\n", "not ours", ["list type=gitea"]),
      // Not ours before anything is read.
      (nil, "protocol=https\n", "not ours", []),
      (nil, "host=github.com\n", "not ours", []),
    ] as [(String?, String, String, [String])])
  func eachRequestCostsTheReadsItNeeds(requested: String?, request: String, expected: String, reads: [String]) throws {
    let store = try RecordingTokenStore(Self.accounts)
    let helper = try Self.helper(
      store, environment: requested.map { ["TOKENCTL_ACCOUNT": $0] } ?? [:],
      rules: ["https://github.com/acme/": "github:grace"])
    #expect(F.describe(try helper.choose(for: Self.message(request))) == expected)
    #expect(store.calls == reads)
  }

  @Test func whenTheSearchWithTokensFailsTheListingChooses() throws {
    let store = try RecordingTokenStore(Self.accounts, failLoadAll: true)
    let selection = try Self.helper(store).choose(
      for: Self.message("protocol=https\nhost=github.com\nusername=grace\n"))
    #expect(F.describe(selection) == "account github:2")
    #expect(store.calls == ["loadAll type=github", "list type=github"])
  }

  @Test func aNameThatMatchesSeveralAccountsIsAnError() throws {
    let store = try RecordingTokenStore(Self.accounts)
    let helper = try Self.helper(store, environment: ["TOKENCTL_ACCOUNT": "ada"])
    let error = #expect(throws: TokenKitError.self) {
      try helper.choose(for: Self.message("protocol=https\nhost=github.com\n"))
    }
    #expect(error?.code == .ambiguousAccount)
  }

  /// What `get` asked of its callbacks.
  final class Calls: Sendable {
    let log = Mutex<[String]>([])
    var all: [String] { log.withLock { $0 } }
    func record(_ call: String) { log.withLock { $0.append(call) } }
  }

  @Test func aTokenValidForAMinuteIsAnsweredAsFoundAndAnyOtherIsRefreshedFirst() async throws {
    for (expiresIn, refreshed) in [(3600.0, false), (60, false), (59, true)] {
      let store = try RecordingTokenStore([Self.stored(F.account("github", "1", "ada"), expiresIn: expiresIn)])
      let calls = Calls()
      let answer = try await Self.helper(store).get(
        Self.message("protocol=https\nhost=github.com\n"),
        freshTokens: { key, stored in
          // The account as the choosing read it, so the refresher need not read it again.
          calls.record("fresh \(key)" + (stored?.account.key == key ? " as read" : ""))
          return TokenSet(accessToken: "FRESH", expiresAt: F.now.addingTimeInterval(3600))
        })
      #expect(calls.all == (refreshed ? ["fresh github:1 as read"] : []))
      #expect(answer?["password"] == (refreshed ? "FRESH" : "ACCESS"))
      #expect(store.calls == ["loadAll type=github"])
    }
  }

  @Test func withoutAnAccountSignInIsOfferedAndOtherwiseExplained() async throws {
    let request = try Self.message("protocol=https\nhost=gitlab.com\n")
    let store = try RecordingTokenStore()
    let explanations = Explanations()
    let calls = Calls()
    let declined = try await Self.helper(store, explain: explanations).get(
      request, freshTokens: { _, _ in TokenSet(accessToken: "NEVER") },
      signIn: { types, host in
        calls.record("sign in \(types) at \(host)")
        return false
      })
    #expect(declined == nil)
    #expect(calls.all == ["sign in [\"gitlab\"] at gitlab.com"])
    #expect(explanations.all == [.noAccount(types: ["gitlab"], host: "gitlab.com")])

    let signedIn = try await Self.helper(store, explain: explanations).get(
      request, freshTokens: { _, _ in TokenSet(accessToken: "NEVER") },
      signIn: { _, _ in
        try store.inner.save(F.account("gitlab", "9", "ada"), tokens: TokenSet(accessToken: "NEW"))
        return true
      })
    #expect(signedIn?["password"] == "NEW")
    #expect(explanations.all.count == 1, "nothing more to explain")
  }

  @Test func aSignInThatLeavesNoAccountForTheHostIsNotExplainedAgain() async throws {
    let explanations = Explanations()
    let answer = try await Self.helper(try RecordingTokenStore(), explain: explanations).get(
      Self.message("protocol=https\nhost=gitlab.com\n"), freshTokens: { _, _ in TokenSet(accessToken: "NEVER") },
      signIn: { _, _ in true })
    #expect(answer == nil)
    #expect(explanations.all.isEmpty)
  }

  @Test func otherDeclinesAreExplainedWithoutOfferingASignInAndHostsNotOursAreNot() async throws {
    let explanations = Explanations()
    let helper = try Self.helper(try RecordingTokenStore(Self.accounts), explain: explanations)
    for request in ["protocol=https\nhost=github.com\n", "protocol=https\nhost=example.org\n"] {
      let answer = try await helper.get(
        Self.message(request), freshTokens: { _, _ in TokenSet(accessToken: "NEVER") },
        signIn: { _, _ in
          Issue.record("no sign-in offered")
          return false
        })
      #expect(answer == nil)
    }
    #expect(
      explanations.all == [
        .ambiguous([F.account("github", "1", "ada"), F.account("github", "2", "grace")], host: "github.com")
      ])
  }

  @Test func anAccountSignedInElsewhereThanItsTypeNowSaysGetsNoToken() async throws {
    var registry = AccountTypeRegistry()
    try registry.register(
      EndpointDescriptor(
        id: "forge", displayName: "forge", endpoints: .discovered(issuer: URL(string: "https://forge.example/")!),
        git: GitIntegration(hosts: ["git.forge.example"], username: .literal("oauth2"))),
      source: "test")
    let store = try RecordingTokenStore([Self.stored(F.account("forge", "1", "ada", issuer: "https://old.example/"))])
    let helper = CredentialHelper(
      registry: registry, store: store, environment: [:], clock: FixedClock(F.now), locks: NoRefreshInFlight(),
      explain: { _ in })
    await #expect(throws: TokenKitError.self) {
      try await helper.get(
        Self.message("protocol=https\nhost=git.forge.example\n"),
        freshTokens: { _, _ in TokenSet(accessToken: "NEVER") })
    }
  }

  @Test func eraseExpiresTheAccessTokenGitWasRefusedAndNoOther() throws {
    let store = try RecordingTokenStore([Self.stored(F.account("gitlab", "3", "ada"), access: "GL")])
    let helper = try Self.helper(store)
    try helper.erase(Self.message("protocol=https\nhost=gitlab.com\nusername=oauth2\npassword=OTHER\n"))
    #expect(
      try store.inner.load(AccountKey(type: "gitlab", id: "3"))?.tokens.expiresAt == F.now.addingTimeInterval(3600))
    try helper.erase(Self.message("protocol=https\nhost=gitlab.com\nusername=oauth2\npassword=GL\n"))
    let tokens = try #require(try store.inner.load(AccountKey(type: "gitlab", id: "3"))?.tokens)
    #expect(tokens.expiresAt == F.now.addingTimeInterval(-1))
    #expect(tokens.refreshToken == "REFRESH" && tokens.accessToken == "GL")
    // Where nothing answers, nothing is erased.
    try helper.erase(Self.message("protocol=https\nhost=github.com\npassword=GL\n"))
    #expect(store.calls.filter { $0.hasPrefix("save") } == ["save gitlab:3"])
  }

  @Test func theServedHostsAreThoseTheTypesListAndThoseOfTheirAccountsIssuers() throws {
    let store = try RecordingTokenStore(Self.accounts)
    #expect(try Self.helper(store).servedHosts() == ["codeberg.org", "git.corp.example", "github.com", "gitlab.com"])
    #expect(store.calls == ["list type=gitea"])
  }
}
