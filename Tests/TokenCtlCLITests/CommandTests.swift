import Foundation
import TestSupport
import Testing
import TokenCtlCLI
import TokenKit
import TokenStoreTesting

/// The commands in-process, with an in-memory store and a fixed clock, so that output can
/// be checked to the character.
@Suite struct CommandTests {
  static let now = Date(timeIntervalSince1970: 1_800_000_000)
  let backing = InMemoryTokenStore.Backing()

  func store(_ group: String = "default") -> InMemoryTokenStore { InMemoryTokenStore(group: group, backing: backing) }

  func seed(
    _ type: String, _ id: String, _ name: String, group: String = "default", expiresIn: Double?,
    refresh: Bool = true, access: String = "ACCESS"
  ) throws {
    try store(group).save(
      Account(
        type: type, id: id, name: name, group: group, scopes: ["openid"], createdAt: Self.now, updatedAt: Self.now),
      tokens: TokenSet(
        accessToken: access, refreshToken: refresh ? "REFRESH" : nil,
        expiresAt: expiresIn.map { Self.now.addingTimeInterval($0) }))
  }

  func run(
    _ arguments: String..., environment: [String: String] = [:], terminal: Bool = false
  ) async throws
    -> (status: Int32, stdout: String, stderr: String)
  {
    try await runInMemory(
      arguments, backing: backing, clock: FixedClock(Self.now), environment: environment, terminal: terminal)
  }

  @Test func typesLabelsEveryEndpoint() async throws {
    let result = try await run("types")
    #expect(result.status == 0)
    // Labels are padded to line up their values: compare with single spaces.
    let lines = result.stdout.split(separator: "\n").map {
      $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }
    // jwks_uri is the one metadata name without `_endpoint`: it once printed as ": URL".
    #expect(lines.contains("jwks uri: https://gitlab.com/oauth/discovery/keys"), "\(result.stdout)")
    #expect(!lines.contains { $0.hasPrefix(":") }, "\(result.stdout)")
  }

  @Test func listShowsATableOfStatusesAndNoTokens() async throws {
    try seed("graph", "oid-1", "ada@contoso.com", expiresIn: 42 * 60, access: "SECRET-A")
    try seed("oidc", "sub-1", "grace", expiresIn: -10, access: "SECRET-B")
    try seed("oidc", "sub-2", "linus", expiresIn: -10, refresh: false, access: "SECRET-C")
    try seed("graph", "oid-9", "other", group: "work", expiresIn: nil)
    let result = try await run("list")
    #expect(result.status == 0)
    #expect(
      result.stdout == """
        TYPE   ACCOUNT          GROUP    STATUS
        graph  ada@contoso.com  default  valid for 42 min, refreshable
        oidc   grace            default  expired, refreshable
        oidc   linus            default  expired, needs sign-in

        """)
    #expect(!result.stdout.contains("SECRET"))
  }

  @Test func hostileNamesFromTheKeyringCannotReachTheTerminal() async throws {
    // Another program of the user's wrote this item; its name tries to clear the screen.
    try seed("graph", "oid-1", "evil\u{1B}[2J\u{9B}31m\rname", expiresIn: 60)
    let list = try await run("list")
    #expect(list.stdout.contains(#"evil\u{1b}[2J\u{9b}31m\u{d}name"#))
    let missing = try await run("token", "x\u{1B}]0;pwned\u{7}")
    #expect(missing.status == 2)
    for output in [list.stdout, list.stderr, missing.stdout, missing.stderr] {
      #expect(
        !output.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B || $0.value == 0x07 || $0.value == 0x0D }
      )
    }
    // JSON keeps the exact name (escaped by the encoder) for programs to judge.
    let json = try await run("list", "--json")
    #expect(!json.stdout.unicodeScalars.contains { $0.value == 0x1B })
    let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    let accounts = try #require(document["accounts"] as? [[String: Any]])
    #expect(accounts.first?["name"] as? String == "evil\u{1B}[2J\u{9B}31m\rname")
  }

  @Test func listColoursOnlyATerminalWithoutNO_COLOR() async throws {
    try seed("graph", "oid-1", "ada", expiresIn: 60)
    #expect(try await run("list", terminal: true).stdout.contains("\u{1B}[32m"))
    #expect(try await !run("list", environment: ["NO_COLOR": "1"], terminal: true).stdout.contains("\u{1B}["))
    #expect(try await !run("list", terminal: false).stdout.contains("\u{1B}["))
  }

  @Test func listFiltersByTypeAndGroup() async throws {
    try seed("graph", "oid-1", "ada", expiresIn: 60)
    try seed("oidc", "sub-1", "grace", expiresIn: 60)
    try seed("graph", "oid-2", "work-ada", group: "work", expiresIn: nil)
    #expect(try await run("list", "--type", "oidc").stdout.contains("grace"))
    #expect(try await !run("list", "--type", "oidc").stdout.contains("ada"))
    let work = try await run("list", "--group", "work")
    #expect(work.stdout.contains("work-ada") && !work.stdout.contains("grace"))
    #expect(try await run("list", environment: ["TOKENCTL_GROUP": "work"]).stdout.contains("valid (no expiry)"))
    let empty = try await run("list", "--group", "nobody")
    #expect(
      empty.status == 0 && empty.stdout.isEmpty
        && empty.stderr
          == "No accounts in group 'nobody'.\n"
          + "hint: Run `tokenctl types` to see the account types, then `tokenctl login` with one of them.\n"
    )
  }

  @Test func listJSONCarriesAFormatVersionAndNoTokens() async throws {
    try seed("graph", "oid-1", "ada", expiresIn: 2520, access: "SECRET-A")
    let result = try await run("list", "--json")
    #expect(result.status == 0)
    #expect(!result.stdout.contains("SECRET") && !result.stdout.contains("REFRESH"))
    let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    #expect(document["format"] as? Int == 1)
    let account = try #require((document["accounts"] as? [[String: Any]])?.first)
    #expect(account["type"] as? String == "graph")
    #expect(account["id"] as? String == "oid-1")
    #expect(account["expires_in"] as? Int == 2520)
    #expect(account["expires_at"] as? String == "2027-01-15T08:42:00Z")
    #expect(account["valid"] as? Bool == true)
    #expect(account["refreshable"] as? Bool == true)
  }

  @Test func tokenPrintsTheAccessTokenAlone() async throws {
    try seed("graph", "oid-1", "ada@contoso.com", expiresIn: 3600, access: "eyJ-the-token")
    for name in ["graph:ada@contoso.com", "ada@contoso.com", "oid-1", "graph:oid-1"] {
      let result = try await run("token", name)
      #expect(result.status == 0 && result.stdout == "eyJ-the-token\n" && result.stderr.isEmpty)
    }
  }

  @Test(arguments: [
    // 14: the token must be refreshed, and the built-in graph type has no client id yet.
    (120.0, [String](), Int32(0)), (59, [], 14), (59, ["--min-valid", "30"], 0), (-5, ["--min-valid", "0"], 14),
    (3600, ["--min-valid", "3601"], 14),
  ])
  func tokenHonoursMinValid(expiresIn: Double, options: [String], status: Int32) async throws {
    try seed("graph", "oid-1", "ada", expiresIn: expiresIn, access: "SECRET")
    let output = CapturedOutput()
    let backing = backing
    let context = CLIContext(
      registry: try BuiltinPlugins.registry(), makeStore: { InMemoryTokenStore(group: $0, backing: backing) },
      clock: FixedClock(Self.now), environment: [:], output: output)
    #expect(await TokenCtl.main(arguments: ["token", "ada"] + options, context: context) == status)
    #expect(output.stdout == (status == 0 ? "SECRET\n" : ""))
    #expect(!output.stderr.contains("SECRET"))
  }

  @Test func anExpiredTokenWithoutRefreshTokenAsksForASignIn() async throws {
    try seed("graph", "oid-1", "ada", expiresIn: -300, refresh: false)
    let result = try await run("token", "graph:ada")
    #expect(result.status == 4)
    #expect(
      result.stderr
        == "tokenctl: the access token of graph:ada has expired and there is no refresh token\nhint: Run `tokenctl login graph:ada` to get a new one.\n"
    )
  }

  /// The names an ambiguity offers are the provider's ids, which may hold anything a shell
  /// splits or expands: the hint quotes them, and each runs as printed (an
  /// account such as `oidc:127.0.0.1:9450/o|1` offered bare would not).
  @Test func anAmbiguityOffersNamesThatSurviveTheShell() async throws {
    try seed("oidc", "127.0.0.1:9450/o|1", "ada", expiresIn: 60, access: "ACCESS-1")
    try seed("oidc", "$HOME 2", "ada", expiresIn: 60, access: "ACCESS-2")
    let ambiguous = try await run("token", "ada")
    #expect(ambiguous.status == 3)
    let hint = try #require(ambiguous.stderr.split(separator: "\n").first { $0.hasPrefix("hint: ") })
    #expect(hint == "hint: Name one as TYPE:ACCOUNT-ID: 'oidc:$HOME 2', 'oidc:127.0.0.1:9450/o|1'.", "\(hint)")
    // Each offered word, through a shell, is the name that selects its account.
    let words = hint.dropFirst("hint: Name one as TYPE:ACCOUNT-ID: ".count).dropLast().components(separatedBy: ", ")
    for (word, access) in zip(words, ["ACCESS-2", "ACCESS-1"]) {
      let shell = try await TestProcess.run("/bin/sh", ["-c", "printf %s \(word)"], environment: [:])
      let token = try await run("token", shell.stdout)
      #expect(token.stdout == access + "\n", "\(word) → \(shell.stdout): \(token.stderr)")
    }
  }

  /// A slip of a key in a command, a type or an account's name: the near
  /// one is offered, and the offered command runs as shown.
  @Test func aMistypedNameIsOfferedTheNearOne() async throws {
    try seed("graph", "oid-1", "ada@contoso.com", expiresIn: 60, access: "ACCESS-1")
    try seed("oidc", "sub-1", "grace", expiresIn: 60, access: "ACCESS-2")

    let command = try await run("tokn", "graph:ada@contoso.com")
    #expect(command.status == 64)
    let hint = try #require(command.stderr.split(separator: "\n").last)
    #expect(hint == "hint: Did you mean `tokenctl token graph:ada@contoso.com`?", "\(command.stderr)")
    // Through a shell, the words of the hint are a command line that works.
    let printed = hint.split(separator: "`")[1]
    let shell = try await TestProcess.run(
      "/bin/sh", ["-c", "tokenctl() { printf '%s\\n' \"$@\"; }; \(printed)"], environment: [:])
    let words = shell.stdout.split(separator: "\n").map(String.init)
    #expect(try await run(words[0], words[1]).stdout == "ACCESS-1\n")
    #expect(try await run("zzzz").stderr.contains("Did you mean") == false, "nothing near: no guess")

    let name = try await run("token", "graph:ada@contso.com")
    #expect(name.status == 2)
    #expect(
      name.stderr.contains(
        "no account 'graph:ada@contso.com' in group 'default'; did you mean 'graph:ada@contoso.com'?"))
    // The part of an address before the @, and a name of another type.
    #expect(try await run("token", "ada").stderr.contains("did you mean 'graph:ada@contoso.com'?"))
    #expect(try await run("token", "grac").stderr.contains("did you mean 'oidc:grace'?"))
    #expect(try await run("token", "graph:grace").stderr.contains("did you mean") == false, "another type's")

    let type = try await run("login", "githb")
    #expect(type.status == 6)
    #expect(type.stderr.contains("no account type 'githb'; did you mean 'github'?"), "\(type.stderr)")
  }

  /// `token --json`: the token with its expiry and scopes.
  @Test func tokenAsJSONSaysWhenItExpiresAndWhatItCarries() async throws {
    try seed("graph", "oid-1", "ada", expiresIn: 600, access: "ACCESS-1")
    let result = try await run("token", "graph:ada", "--json")
    #expect(result.status == 0, "\(result.stderr)")
    let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    #expect(document["format"] as? Int == 1)
    #expect(document["access_token"] as? String == "ACCESS-1")
    #expect(document["expires_at"] as? String == "2027-01-15T08:10:00Z")
    #expect(document["scopes"] as? [String] == ["openid"])
    // An error is a document too.
    let missing = try await run("token", "graph:grace", "--json")
    #expect(missing.status == 2)
    #expect(missing.stdout.contains("\"no-such-account\"") || missing.stdout.contains("\"error\""))
  }

  /// `-q` is `--quiet`, before or after the command; errors are still said.
  @Test func dashQIsTheShortFormOfQuiet() async throws {
    try seed("graph", "oid-1", "ada", expiresIn: 60)
    try seed("graph", "oid-2", "grace", expiresIn: 60)
    try seed("graph", "oid-3", "hopper", expiresIn: 60)
    let said = try await run("revoke", "graph:ada")
    #expect(said.status == 0 && !said.stderr.isEmpty, "revoke says what it did: \(said)")
    let before = try await run("-q", "revoke", "graph:grace")
    #expect(before.status == 0 && before.stdout.isEmpty && before.stderr.isEmpty, "\(before)")
    let after = try await run("revoke", "graph:hopper", "-q")
    #expect(after.status == 0 && after.stdout.isEmpty && after.stderr.isEmpty, "\(after)")
    #expect(try store().list(.all).isEmpty)
    let missing = try await run("revoke", "graph:grace", "-q")
    #expect(missing.status != 0 && missing.stderr.contains("no account 'graph:grace'"), "\(missing)")
    #expect(try await run("--help").stdout.contains("-q, --quiet"))
  }

  /// `revoke --json`, `unregister --json` and `--quiet`.
  @Test func revokeAndUnregisterSayWhatTheyDidAsJSONOrNothing() async throws {
    try seed("graph", "oid-1", "ada", expiresIn: 60)
    try seed("graph", "oid-2", "grace", expiresIn: 60)
    let revoke = try await run("revoke", "graph:ada", "--json")
    #expect(revoke.status == 0, "\(revoke.stderr)")
    let document = try #require(try JSONSerialization.jsonObject(with: Data(revoke.stdout.utf8)) as? [String: Any])
    #expect(document["format"] as? Int == 1)
    #expect(document["account"] as? String == "graph:ada" && document["id"] as? String == "oid-1")
    #expect(document["group"] as? String == "default")
    #expect(document["revoked_at_server"] as? Bool == false)
    #expect(revoke.stderr.isEmpty, "\(revoke.stderr)")
    let quiet = try await run("--quiet", "revoke", "graph:grace")
    #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet.stderr)")
    #expect(try store().list(.all).isEmpty)
    // An error is still said.
    #expect(try await run("revoke", "graph:grace", "--quiet").stderr.contains("no account 'graph:grace'"))

    let registrations = InMemoryClientRegistrationStore()
    try registrations.save(
      ClientRegistration(
        issuer: "https://id.example.org", clientID: "client-1", redirectURIs: ["http://127.0.0.1/"],
        registeredAt: Self.now))
    let output = CapturedOutput()
    var context = CLIContext(
      registry: try BuiltinPlugins.registry(),
      makeStore: { [backing] in InMemoryTokenStore(group: $0, backing: backing) },
      clock: FixedClock(Self.now), environment: [:], output: output)
    context.registrations = registrations
    let status = await TokenCtl.main(arguments: ["unregister", "https://id.example.org", "--json"], context: context)
    #expect(status == 0, "\(output.stderr)")
    let unregistered = try #require(
      try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
    #expect(unregistered["issuer"] as? String == "https://id.example.org")
    #expect(unregistered["client_id"] as? String == "client-1")
    #expect(unregistered["outcome"] as? String == "forgotten")
    #expect(try registrations.load(issuer: "https://id.example.org") == nil)
  }

  /// `login oidc` with nothing: the issuer is what it needs
  /// first, since at an issuer that lets clients register it needs no client id.
  @Test func aSignInWithNothingAsksForTheIssuerFirst() async throws {
    let result = try await run("login", "oidc", "--browser")
    #expect(result.status == 14)
    #expect(
      result.stderr == """
        tokenctl: account type 'oidc' needs an issuer
        hint: Pass --issuer https://… or set issuer in the [types.oidc] table of config.toml.

        """)
  }

  /// Without a display, the device grant is chosen only when the server offers it: its
  /// endpoint, and the grant among those its discovery document lists.
  /// Otherwise the sign-in asks for the pasted address, and no device code.
  @Test(arguments: [(["authorization_code", "refresh_token"], false), (nil, true)])
  func theDeviceGrantIsChosenOnlyWhereTheServerOffersIt(listed: [String]?, device: Bool) async throws {
    let sandbox = CommandSandbox()
    let transport = ScriptedTransport { request throws(TransportError) in
      switch request.url.path() {
      case "/.well-known/openid-configuration":
        var document: [String: JSONValue] = [
          "issuer": .string("https://id.example"), "authorization_endpoint": .string("https://id.example/authorize"),
          "token_endpoint": .string("https://id.example/token"),
          "device_authorization_endpoint": .string("https://id.example/device"),
          "code_challenge_methods_supported": .array([.string("S256")]),
        ]
        if let listed { document["grant_types_supported"] = .array(listed.map(JSONValue.string)) }
        return ScriptedTransport.json(object: document)
      default: return HTTPResponse(status: 400)
      }
    }
    _ = try await sandbox.run(
      ["login", "oidc", "--issuer", "https://id.example", "--client-id", "app", "--timeout", "1"],
      transport: transport)
    #expect(transport.requests.contains { $0.url.path() == "/device" } == device, "\(transport.requests)")
  }

  /// A browser sign-in at a server that cannot be reached fails at once, with the network's
  /// exit status, and opens no browser, rather than wait
  /// out the whole timeout, five minutes by default.
  @Test func aBrowserSignInAtAServerThatCannotBeReachedFailsAtOnce() async throws {
    let sandbox = CommandSandbox()
    let transport = ScriptedTransport { request throws(TransportError) in
      guard request.url.path() == "/.well-known/openid-configuration" else { return HTTPResponse(status: 404) }
      return ScriptedTransport.json(object: [
        "issuer": .string("https://id.example"),
        // RFC 2606: `.invalid` never resolves.
        "authorization_endpoint": .string("https://login.id.invalid/authorize"),
        "token_endpoint": .string("https://login.id.invalid/token"),
        "code_challenge_methods_supported": .array([.string("S256")]),
      ])
    }
    let result = try await sandbox.run(
      ["login", "oidc", "--issuer", "https://id.example", "--client-id", "app", "--browser", "--timeout", "30"],
      transport: transport)
    #expect(result.status == 10, "\(result.stderr)")
    #expect(
      result.stderr.contains("cannot reach login.id.invalid, where the browser would sign in"), "\(result.stderr)")
    #expect(!result.stderr.contains("Open this address"), "\(result.stderr)")
  }

  @Test func accountErrorsHaveTheirExitCodes() async throws {
    try seed("graph", "oid-1", "ada", expiresIn: 60)
    try seed("oidc", "sub-1", "ada", expiresIn: 60)
    let ambiguous = try await run("token", "ada")
    #expect(ambiguous.status == 3)
    #expect(ambiguous.stderr.contains("graph:oid-1") && ambiguous.stderr.contains("oidc:sub-1"))
    let missing = try await run("token", "graph:grace")
    #expect(missing.status == 2)
    #expect(
      missing.stderr == """
        tokenctl: no account 'graph:grace' in group 'default'
        hint: Run `tokenctl list --group default` to see the accounts there.

        """)
    #expect(try await run("list", "--type", "nope").status == 6)
    #expect(try await run("token", "ada", "--min-valid", "-1").status == 64)
    #expect(try await run("frobnicate").status == 64)
  }

  @Test func errorsAreJSONTooWhenJSONWasAskedFor() async throws {
    let result = try await run("list", "--type", "nope", "--json")
    #expect(result.status == 6)
    let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    let error = try #require(document["error"] as? [String: Any])
    #expect(document["format"] as? Int == 1)
    #expect(error["code"] as? String == "unknown-account-type")
    #expect(error["exit"] as? Int == 6)
  }

  @Test func revokeRemovesOnlyThatAccount() async throws {
    try seed("graph", "oid-1", "ada", expiresIn: 60)
    try seed("graph", "oid-2", "grace", expiresIn: 60)
    let result = try await run("revoke", "graph:ada")
    #expect(result.status == 0)
    #expect(result.stderr.contains("Removed graph:ada from group 'default'"))
    #expect(try store().list(.all).map(\.account.name) == ["grace"])
    #expect(try await run("revoke", "graph:ada").status == 2)
    // `logout` is another name of it.
    let logout = try await run("logout", "graph:grace")
    #expect(logout.status == 0, "\(logout.stderr)")
    #expect(try store().list(.all).isEmpty)
  }

  @Test func typesListsTheBuiltInTypesWithTheirEndpoints() async throws {
    let text = try await run("types")
    #expect(text.status == 0)
    #expect(text.stdout.contains("graph  Microsoft Graph"))
    #expect(text.stdout.contains("https://login.microsoftonline.com/common/oauth2/v2.0/token"))
    #expect(text.stdout.contains("oidc  OpenID Connect"))
    let json = try await run("types", "--json")
    let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    #expect(document["format"] as? Int == 1)
    let types = try #require(document["types"] as? [[String: Any]])
    #expect(
      types.map { $0["id"] as? String } == ["bitbucket", "gitea", "github", "gitlab", "google", "graph", "oidc"])
    let byID = Dictionary(types.map { ($0["id"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
    let endpoints = try #require(byID["graph"]?["endpoints"] as? [String: String])
    #expect(
      endpoints["device_authorization_endpoint"] == "https://login.microsoftonline.com/common/oauth2/v2.0/devicecode")
    #expect(byID["oidc"]?["issuer_from_user"] as? Bool == true)
  }

  @Test func versionAndHelpNeedNoKeyring() async throws {
    let version = try await run("--version")
    #expect(version.status == 0 && version.stdout == "tokenctl \(TokenCtl.version)\n")
    let help = try await run("--help")
    #expect(
      help.status == 0 && help.stdout.contains("Exit status:") && help.stdout.contains("  7   The keyring is locked."))
  }
}
