import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenCtlCLI

/// What shell completion offers for an ACCOUNT, in-process: each word names one account
/// as the command line resolves it, no token is loaded, and names no shell could take
/// safely are not offered. The shells themselves are in `CompletionTests`.
@Suite struct CompletionCandidatesTests {
  static func account(_ type: String, _ id: String, _ name: String, group: String = "default") -> Account {
    Account(type: type, id: id, name: name, group: group, createdAt: .now, updatedAt: .now)
  }

  static let knownTypes: Set<String> = ["graph", "github", "gitlab", "corp"]

  /// Display names shared within a type and across types, a name equal to another
  /// account's id, and names with a colon (one whose prefix is a type, one whose is not).
  static let tricky = [
    account("graph", "oid-ada", "ada@contoso.com"),
    account("gitlab", "gl-ada", "ada@contoso.com"),
    account("github", "gh-1", "twin"),
    account("github", "gh-2", "twin"),
    account("corp", "c-1", "gh-2"),
    account("corp", "c-2", "github:octo"),
    account("corp", "c-3", "urn:x"),
    account("graph", "oid-solo", "solo"),
  ]

  @Test func everyWordResolvesToItsAccountAsTheCommandsDo() throws {
    let store = InMemoryTokenStore(group: "default")
    for account in Self.tricky { try store.save(account, tokens: TokenSet(accessToken: "t", expiresAt: nil)) }
    let words = AccountCandidates(accounts: Self.tricky, knownTypes: Self.knownTypes).words
    // Not `twin` (two accounts), nor `ada@contoso.com` (two types), nor `github:octo` (it
    // reads as type github); `gh-2` is corp:c-1's display name, which wins over an id.
    #expect(
      words == [
        "corp:gh-2", "corp:github:octo", "corp:urn:x", "gh-2", "github:gh-1", "github:gh-2",
        "gitlab:ada@contoso.com", "graph:ada@contoso.com", "graph:solo", "solo", "urn:x",
      ])
    // Each word, as `tokenctl token WORD` reads it, names exactly one account; every
    // account has at least one word.
    var named = Set<AccountKey>()
    for word in words {
      let found = try AccountReference(parsing: word, knownTypes: Self.knownTypes).resolve(in: store)
      named.insert(found.account.key)
    }
    #expect(named == Set(Self.tricky.map(\.key)))
  }

  @Test(arguments: [
    ("evil$(touch /tmp/x)", false), ("back`tick`", false), ("O'Brien", false), ("say \"hi\"", false),
    ("two\nlines", false), ("esc\u{1B}[31m", false), ("tab\there", false), ("{a,b}", false), ("~root", false),
    ("a\\b", false), ("-rf", false), (":leading", false), ("bidi\u{202E}txt", false), ("nbsp\u{00A0}x", false),
    ("semi;colon", false), ("pipe|x", false), ("star*", false), ("equals=x", false), ("", false),
    (String(repeating: "a", count: 201), false),
    ("ada@contoso.com", true), ("graph:Bob Smith", true), ("José Müller", true), ("名前", true),
    ("a_b-c+d/e,f%g#h.i", true), ("x:y:z", true),
  ])
  func onlyPlainWordsReachAShell(word: String, plain: Bool) {
    #expect(CompletionWord.isPlain(word) == plain)
  }

  @Test func zshGetsItsColonsEscaped() {
    #expect(CompletionWord.offered(["graph:ada", "x$y"], to: .zsh) == [#"graph\:ada"#])
    #expect(CompletionWord.offered(["graph:ada", "x$y"], to: .bash) == ["graph:ada"])
    #expect(CompletionWord.offered(["graph:ada"], to: .fish) == ["graph:ada"])
  }

  /// An account whose display name is not plain is still offered, by its id.
  @Test func aHostileNameIsOfferedByItsID() {
    let accounts = [Self.account("github", "gh-9", "evil$(reboot)\n"), Self.account("github", "gh-bad name$", "`x`")]
    let words = AccountCandidates(accounts: accounts, knownTypes: Self.knownTypes).words
    #expect(words == ["github:gh-9"])
  }

  @Test(arguments: [
    (["tokenctl", "token", ""], 2, String?.none),
    (["tokenctl", "token", "--group", "work", ""], 4, "work"),
    (["tokenctl", "token", "--group=work", ""], 3, "work"),
    (["tokenctl", "token", "--group", "'my group'", ""], 4, "my group"),
    (["tokenctl", "token", "--group", "\"my group\"", ""], 4, "my group"),
    (["tokenctl", "--group", "a", "token", "--group", "b", ""], 6, "b"),
    // The word being completed is not a value yet.
    (["tokenctl", "token", "--group", ""], 3, nil),
    (["tokenctl", "token", "--gr"], 2, nil),
  ])
  func theGroupComesFromTheCommandLine(words: [String], index: Int, group: String?) throws {
    #expect(try ShellCompletion.groupOption(in: words, completing: index) == group)
  }

  @Test(arguments: [#"$HOME"#, #""$g""#, #"my\ group"#, "`g`", #"'it'"'s'"#])
  func aGroupItCannotReadGivesNoAccounts(value: String) {
    #expect(throws: (any Error).self) {
      try ShellCompletion.groupOption(in: ["tokenctl", "token", "--group", value, ""], completing: 4)
    }
  }

  /// Through the parser, as a shell calls it: the words come from `list`, never `load`,
  /// and nothing but the words is printed.
  @Test func completingListsAndNeverLoads() async throws {
    let backing = InMemoryTokenStore.Backing()
    let memory = InMemoryTokenStore(group: "default", backing: backing)
    try memory.save(Self.account("graph", "oid-ada", "ada@contoso.com"), tokens: TokenSet(accessToken: "SECRET"))
    let work = InMemoryTokenStore(group: "work", backing: backing)
    try work.save(Self.account("graph", "oid-w", "wendy", group: "work"), tokens: TokenSet(accessToken: "SECRET"))
    let loads = LoadCounter()
    let output = CapturedOutput()
    let context = CLIContext(
      registry: try BuiltinPlugins.registry(),
      makeStore: { ListOnlyStore(base: InMemoryTokenStore(group: $0, backing: backing), loads: loads) },
      clock: SystemClock(), environment: ["XDG_CONFIG_HOME": "/nonexistent"], output: output,
      openBrowser: { _, _ in
        Issue.record("a browser was started"); return nil
      }, readLine: { nil },
      readInput: { _ in [] }, terminal: { nil })

    let status = await TokenCtl.main(
      arguments: ["---completion", "token", "--", "positional@0", "2", "0", "tokenctl", "token", ""], context: context)
    #expect(status == 0)
    #expect(output.stdout.split(separator: "\n") == ["ada@contoso.com", "graph:ada@contoso.com"])
    let inWork = await TokenCtl.main(
      arguments: [
        "---completion", "graph", "me", "--", "--account", "6", "0", "tokenctl", "graph", "me", "--group", "work",
        "--account", "",
      ], context: context)
    #expect(inWork == 0)
    #expect(output.stdout.hasSuffix("graph:wendy\nwendy\n"))
    #expect(output.stderr.isEmpty && !output.stdout.contains("SECRET"))
    #expect(loads.count.withLock { $0 } == 0)
  }

  /// fish 3's `complete -C` gives the generated script no cursor, so the request lacks
  /// one: the parser's complaint would land on the user's command line.
  @Test func aMalformedRequestCompletesNothingQuietly() async throws {
    let sandbox = CommandSandbox()
    for request in [
      ["---completion", "token", "--", "positional@0", "2", "tokenctl", "token", ""],
      ["---completion", "nosuchcommand", "--", "positional@0", "2", "0", "tokenctl", "x", ""],
    ] {
      let result = try await sandbox.run(request, transport: ScriptedTransport(responses: []))
      #expect(result.status == 0 && result.stdout.isEmpty && result.stderr.isEmpty, "\(request): \(result)")
    }
  }

  @Test func typesComeFromTheRegistryAndTheUsersFiles() async throws {
    let sandbox = CommandSandbox()
    defer { try? FileManager.default.removeItem(at: sandbox.home) }
    try sandbox.writeConfig(
      """
      id = "acme"
      display_name = "Acme"
      issuer = "https://id.acme.example"
      """, to: "types/acme.toml")
    try sandbox.writeConfig("this is not TOML", to: "types/broken.toml")
    let result = try await sandbox.run(
      ["---completion", "login", "--", "positional@0", "2", "0", "tokenctl", "login", ""],
      transport: ScriptedTransport(responses: []))
    #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
    let types = result.stdout.split(separator: "\n")
    #expect(types.contains("acme") && types.contains("graph") && types.contains("github"))
  }

  /// `login` takes a type or an account to sign in to again (`tokenctl login ACCOUNT`), so
  /// it offers both; an account's bare name that is a type id (`github`) is offered only
  /// as `TYPE:NAME`, since login reads the bare word as the type. The `--group` given is
  /// the one whose accounts are offered.
  @Test func loginOffersTheTypesAndTheAccounts() async throws {
    let sandbox = CommandSandbox()
    defer { try? FileManager.default.removeItem(at: sandbox.home) }
    try sandbox.store.save(Self.account("graph", "oid-ada", "ada@contoso.com"), tokens: TokenSet(accessToken: "t"))
    try sandbox.store.save(Self.account("gitlab", "gl-1", "github"), tokens: TokenSet(accessToken: "t"))
    try InMemoryTokenStore(group: "work", backing: sandbox.backing).save(
      Self.account("graph", "oid-w", "wendy", group: "work"), tokens: TokenSet(accessToken: "t"))
    let result = try await sandbox.run(
      ["---completion", "login", "--", "positional@0", "2", "0", "tokenctl", "login", ""],
      transport: ScriptedTransport(responses: []))
    #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
    let words = result.stdout.split(separator: "\n").map(String.init)
    #expect(words.contains("graph") && words.contains("oidc"), "the types: \(words)")
    #expect(words.contains("ada@contoso.com") && words.contains("graph:ada@contoso.com"), "the accounts: \(words)")
    #expect(words.contains("gitlab:github") && words.filter { $0 == "github" }.count == 1, "\(words)")
    #expect(!words.contains("wendy"))
    let inWork = try await sandbox.run(
      ["---completion", "login", "--", "positional@0", "4", "0", "tokenctl", "login", "--group", "work", ""],
      transport: ScriptedTransport(responses: []))
    #expect(inWork.stdout.split(separator: "\n").contains("wendy"), "\(inWork.stdout)")
  }
}

private final class LoadCounter: Sendable {
  let count = Mutex(0)
}

/// A store that lists from `base` and counts, then refuses, everything else.
private struct ListOnlyStore: TokenStore {
  let base: InMemoryTokenStore
  let loads: LoadCounter
  var group: String { base.group }
  func list(_ query: AccountQuery) throws -> [AccountListing] { try base.list(query) }
  func load(_ key: AccountKey) throws -> StoredAccount? { throw refusal() }
  func loadAll(_ query: AccountQuery) throws -> [StoredAccount] { throw refusal() }
  func save(_ account: Account, tokens: TokenSet) throws { throw refusal() }
  func remove(_ key: AccountKey) throws -> Bool { throw refusal() }

  private func refusal() -> TokenKitError {
    loads.count.withLock { $0 += 1 }
    return TokenKitError(.storeFailure, "completion touched more than the listing")
  }
}
