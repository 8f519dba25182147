import CredentialHelpers
import Testing
import TokenKit

/// The choosing policy as tables, one per step: which types serve a host, which account
/// the user named, and which account answers.
@Suite struct CredentialAccountChooserTests {
  typealias F = ChooserFixtures

  // MARK: 1. The types that serve the host

  @Test(
    arguments: [
      ("https", "github.com", ["github", "mirror"]),
      ("HTTPS", "GitHub.COM", ["github", "mirror"]),
      ("https", "gitlab.com", ["gitlab"]),
      // Plain http carries no token to another machine, nor over another protocol.
      ("http", "github.com", []),
      ("ssh", "github.com", []),
      ("", "github.com", []),
      // A host is the whole name, with its port.
      ("https", "github.com.evil.example", []),
      ("https", "evil.example/github.com", []),
      ("https", "github.com:8443", []),
      ("https", "gitlab.com.", []),
      // Types that list no hosts are not found by their hosts.
      ("https", "codeberg.org", []),
      ("https", "forge.example", []),
      // Plain http to this machine, when the type's authorization server is here too.
      ("http", "127.0.0.1:8080", ["local"]),
      ("https", "127.0.0.1:8080", ["local"]),
      ("http", "localhost:3000", ["local"]),
      ("http", "[::1]:8080", ["local"]),
      ("http", "127.0.0.1:9090", []),
      ("https", "127.0.0.1:9090", ["lan"]),
      ("http", "127.0.0.1", []),
    ] as [(String, String, [String])])
  func aTypeServesTheHostsItLists(scheme: String, host: String, expected: [String]) {
    let serving = F.chooser().typesListingHost(of: F.request(scheme, host))
    #expect(serving.types.map(\.id) == expected)
    #expect(serving.accountsOnHost.isEmpty)
    #expect(serving.typesToRead == serving.types, "their accounts are still to be read")
  }

  @Test func theTypesWithoutHostsAreThoseThatListNone() {
    #expect(F.chooser().typesWithoutHosts.map(\.id) == ["gitea", "forge"])
  }

  @Test(
    arguments: [
      ("https", "codeberg.org", true, ["gitea: g1", "forge: f2"]),
      ("https", "CODEBERG.org", true, ["gitea: g1", "forge: f2"]),
      // The port is part of the instance: git.corp.example is another one.
      ("https", "git.corp.example:3000", true, ["gitea: g2"]),
      ("https", "git.corp.example", true, []),
      // An account without a recorded issuer is on the configured instance.
      ("https", "forge.example", true, ["forge: f1"]),
      // The configured instance is served before anyone signs in to it.
      ("https", "forge.example", false, ["forge: "]),
      ("https", "codeberg.org", false, []),
      ("https", "gitea.com", true, []),
      // Plain http only to an instance on this machine whose issuer is plain http too.
      ("http", "codeberg.org", true, []),
      ("http", "127.0.0.1:3000", true, ["gitea: g3"]),
      ("https", "127.0.0.1:3000", true, ["gitea: g3"]),
      ("ssh", "codeberg.org", true, []),
    ] as [(String, String, Bool, [String])])
  func aTypeWithoutHostsServesTheHostsOfItsIssuers(scheme: String, host: String, signedIn: Bool, expected: [String]) {
    let serving = F.chooser().typesServingIssuerHost(
      of: F.request(scheme, host), accounts: signedIn ? F.issuerAccounts : [:])
    let found = serving.types.map { type in
      "\(type.id): " + (serving.accountsOnHost[type.id] ?? []).map(\.id).joined(separator: ",")
    }
    #expect(found == expected)
    #expect(serving.typesToRead.isEmpty, "their accounts were read to choose them")
  }

  @Test func anIssuerOnPlainHTTPIsServedOverHTTPSButNotOverPlainHTTPToAnotherMachine() {
    let accounts = ["gitea": [F.account("gitea", "x", "ada", issuer: "http://git.lan.example/")]]
    for scheme in ["http", "https"] {
      let serving = F.chooser().typesServingIssuerHost(of: F.request(scheme, "git.lan.example"), accounts: accounts)
      // Over https the host is the issuer's; over http it is not this machine.
      #expect(serving.types.map(\.id) == (scheme == "https" ? ["gitea"] : []))
    }
  }

  // MARK: 2. An account the user named

  static let rules = [
    "https://github.com/acme/": "github:ada-at-acme",
    "https://github.com/acme/tools": "github:ada-at-tools",
    "https://gitlab.com": "gitlab:ada",
    "https://gitlab.com/": "gitlab:grace",
    "http://127.0.0.1:8080/repo": "local:dev",
    "https://example.org/x": "nosuch:ada",
    // Refused by config.toml's check; the chooser passes over it.
    "github.com/acme": "github:never",
  ]

  @Test(
    arguments: [
      // The longest prefix that matches wins.
      (nil, "https", "github.com", "acme/app.git", "https://github.com/acme/ names github:ada-at-acme"),
      (nil, "https", "github.com", "acme/tools.git", "https://github.com/acme/tools names github:ada-at-tools"),
      (nil, "https", "github.com", "acme/tools", "https://github.com/acme/tools names github:ada-at-tools"),
      (nil, "https", "github.com", "acme/tools/sub.git", "https://github.com/acme/tools names github:ada-at-tools"),
      // At a segment boundary only, and with no path (credential.useHttpPath unset) only
      // a rule for the whole host matches.
      (nil, "https", "github.com", "acme-corp/app.git", nil),
      (nil, "https", "github.com", "acme/tools-old.git", "https://github.com/acme/ names github:ada-at-acme"),
      (nil, "https", "github.com", nil, nil),
      (nil, "https", "GitHub.com", "acme/x.git", "https://github.com/acme/ names github:ada-at-acme"),
      // Another scheme, host or port matches nothing.
      (nil, "http", "github.com", "acme/app.git", nil),
      (nil, "https", "github.com:443", "acme/app.git", nil),
      (nil, "http", "127.0.0.1:8080", "repo/.git", "http://127.0.0.1:8080/repo names local:dev"),
      // Of two rules that match as long, the one that sorts first.
      (nil, "https", "gitlab.com", "any/thing.git", "https://gitlab.com names gitlab:ada"),
      (nil, "https", "gitlab.com", nil, "https://gitlab.com names gitlab:ada"),
      // A name whose type is not one of ours is a name with a colon in it.
      (nil, "https", "example.org", "x/y", "https://example.org/x names nosuch:ada (no type)"),
      // TOKENCTL_ACCOUNT comes before every rule; empty, it is not set.
      ("github:ada", "https", "github.com", "acme/app.git", "TOKENCTL_ACCOUNT names github:ada"),
      ("graph:ada", "https", "github.com", nil, "TOKENCTL_ACCOUNT names graph:ada"),
      ("ada", "https", "nowhere.example", nil, "TOKENCTL_ACCOUNT names ada (no type)"),
      ("", "https", "github.com", "acme/app.git", "https://github.com/acme/ names github:ada-at-acme"),
    ] as [(String?, String, String, String?, String?)])
  func anAccountIsNamedByTheEnvironmentElseTheLongestRule(
    requested: String?, scheme: String, host: String, path: String?, expected: String?
  ) {
    let chooser = F.chooser(rules: Self.rules, requestedAccount: requested)
    let named = chooser.namedAccount(for: F.request(scheme, host, path: path))
    #expect(
      named.map { "\(F.describe($0.source)) names \($0.reference)" + ($0.reference.type == nil ? " (no type)" : "") }
        == expected)
  }

  @Test func withoutRulesOrTheEnvironmentNoAccountIsNamed() {
    #expect(F.chooser().namedAccount(for: F.request("https", "github.com", path: "acme/app.git")) == nil)
  }

  static let githubServing = CredentialAccountChooser.ServingTypes([F.github, F.mirror])
  static let codebergServing = F.chooser().typesServingIssuerHost(
    of: F.request("https", "codeberg.org"), accounts: F.issuerAccounts)

  @Test(
    arguments: [
      // The named account answers when its type serves the host.
      ("github.com", F.account("github", "1", "ada"), "account github:1"),
      ("github.com", F.account("mirror", "7", "ada"), "account mirror:7"),
      // A name never sends a token where its type does not serve.
      ("github.com", F.account("gitlab", "2", "ada"), "gitlab:2 by TOKENCTL_ACCOUNT does not serve github.com"),
      ("github.com", F.account("gitea", "g1", "ada"), "gitea:g1 by TOKENCTL_ACCOUNT does not serve github.com"),
      ("github.com", nil, "not signed in: github:ada by TOKENCTL_ACCOUNT"),
      // For a type without hosts, only its accounts on the host's instance.
      ("codeberg.org", F.account("gitea", "g1", "ada", issuer: "https://codeberg.org/"), "account gitea:g1"),
      (
        "codeberg.org", F.account("gitea", "g2", "ada", issuer: "https://git.corp.example:3000/"),
        "gitea:g2 by TOKENCTL_ACCOUNT does not serve codeberg.org"
      ),
      ("codeberg.org", F.account("github", "1", "ada"), "github:1 by TOKENCTL_ACCOUNT does not serve codeberg.org"),
      ("codeberg.org", nil, "not signed in: github:ada by TOKENCTL_ACCOUNT"),
    ] as [(String, Account?, String)])
  func aNamedAccountAnswersOnlyWhereItsTypeServes(host: String, account: Account?, expected: String) {
    let serving = host == "github.com" ? Self.githubServing : Self.codebergServing
    let named = NamedAccount(AccountReference(type: "github", account: "ada"), by: .environment)
    let selection = F.chooser().select(named, resolvedTo: account, serving: serving, for: F.request("https", host))
    #expect(F.describe(selection) == expected)
  }

  @Test func aNamedAccountIsAnsweredWithTheSettingsOfItsTypeAndWithoutTokens() throws {
    let named = NamedAccount(AccountReference(type: nil, account: "ada"), by: .rule(prefix: "https://github.com/"))
    let ada = F.account("mirror", "7", "ada")
    let selection = F.chooser().select(
      named, resolvedTo: ada, serving: Self.githubServing, for: F.request("https", "github.com"))
    #expect(selection == .account(CredentialChoice(account: ada, git: F.mirror.git)))
  }

  @Test func whereNoTypeServesANameIsNotOurs() {
    let named = NamedAccount(AccountReference(type: "github", account: "ada"), by: .environment)
    let selection = F.chooser().select(
      named, resolvedTo: F.account("github", "1", "ada"), serving: .init([]), for: F.request("https", "example.org"))
    #expect(selection == .notOurs)
  }

  // MARK: 3. The accounts of the serving types

  static let ada = F.account("github", "1", "ada")
  static let grace = F.account("github", "2", "grace")
  static let adaOnMirror = F.account("mirror", "3", "ada")

  @Test(
    arguments: [
      ([ada], nil, "account github:1 with tokens"),
      ([ada], "oauth2", "account github:1 with tokens"),
      ([ada], "grace", "account github:1 with tokens"),
      ([], nil, "no account of github,mirror for github.com"),
      ([], "ada", "no account of github,mirror for github.com"),
      ([ada, grace], nil, "ambiguous on github.com: github:1,github:2"),
      ([ada, grace], "", "ambiguous on github.com: github:1,github:2"),
      // The URL's username names an account by its name or its id; a username that names
      // none (the host's own, such as oauth2) leaves every candidate.
      ([ada, grace], "grace", "account github:2 with tokens"),
      ([ada, grace], "2", "account github:2 with tokens"),
      ([ada, grace], "oauth2", "ambiguous on github.com: github:1,github:2"),
      ([ada, grace], "Grace", "ambiguous on github.com: github:1,github:2"),
      // Names are not unique across types.
      ([ada, adaOnMirror], "ada", "ambiguous on github.com: github:1,mirror:3"),
      ([ada, adaOnMirror, grace], "ada", "ambiguous on github.com: github:1,mirror:3"),
      ([grace, adaOnMirror], "3", "account mirror:3 with tokens"),
    ] as [([Account], String?, String)])
  func theOneAccountOfTheServingTypesAnswers(accounts: [Account], username: String?, expected: String) {
    let candidates = accounts.map {
      CredentialAccountChooser.Candidate($0, stored: StoredAccount(account: $0, tokens: TokenSet(accessToken: "T")))
    }
    let selection = F.chooser().select(
      among: candidates, serving: Self.githubServing, for: F.request("https", "github.com", username: username))
    #expect(F.describe(selection) == expected)
  }

  @Test(
    arguments: [
      (nil, "ambiguous on codeberg.org: gitea:g1,forge:f2"),
      ("bob", "account forge:f2"),
      ("g1", "account gitea:g1"),
    ] as [(String?, String)])
  func theAccountsOfTypesWithoutHostsAreThoseChoosingTheTypesFound(username: String?, expected: String) {
    let selection = F.chooser().select(
      among: [], serving: Self.codebergServing, for: F.request("https", "codeberg.org", username: username))
    #expect(F.describe(selection) == expected)
  }

  @Test func theChoiceCarriesTheSettingsOfItsTypeAndTheTokensFoundWithIt() throws {
    let stored = StoredAccount(account: Self.adaOnMirror, tokens: TokenSet(accessToken: "T"))
    let selection = F.chooser().select(
      among: [.init(Self.adaOnMirror, stored: stored)], serving: Self.githubServing,
      for: F.request("https", "github.com"))
    #expect(selection == .account(CredentialChoice(account: Self.adaOnMirror, git: F.mirror.git, stored: stored)))
  }

  @Test func whereNoTypeServesNoAccountIsChosen() {
    let selection = F.chooser().select(
      among: [.init(Self.ada)], serving: .init([]), for: F.request("https", "example.org"))
    #expect(selection == .notOurs)
  }

  // MARK: Hosts for setup-git

  @Test(
    arguments: [
      (
        true,
        [
          "127.0.0.1:3000", "127.0.0.1:8080", "127.0.0.1:9090", "[::1]:8080", "codeberg.org", "forge.example",
          "git.corp.example:3000", "github.com", "gitlab.com", "localhost:3000",
        ]
      ),
      (
        false,
        [
          "127.0.0.1:8080", "127.0.0.1:9090", "[::1]:8080", "forge.example", "github.com", "gitlab.com",
          "localhost:3000",
        ]
      ),
    ] as [(Bool, [String])])
  func theServedHostsAreTheListedOnesAndThoseOfTheIssuers(signedIn: Bool, expected: [String]) {
    #expect(F.chooser().servedHosts(accounts: signedIn ? F.issuerAccounts : [:]) == expected)
  }
}

/// The URLs setup-git configures and doctor checks: each scheme the chooser answers.
@Suite struct ServedURLTests {
  typealias F = ChooserFixtures

  @Test(
    arguments: [
      ("github.com", ["https://github.com"]),
      // Plain http only where both the git host and the authorization server are here.
      ("127.0.0.1:8080", ["https://127.0.0.1:8080", "http://127.0.0.1:8080"]),
      ("[::1]:8080", ["https://[::1]:8080", "http://[::1]:8080"]),
      ("127.0.0.1:9090", ["https://127.0.0.1:9090"]),
      // An instance signed in to over http on this machine, and one over https.
      ("127.0.0.1:3000", ["https://127.0.0.1:3000", "http://127.0.0.1:3000"]),
      ("codeberg.org", ["https://codeberg.org"]),
      // A host nobody serves yet: https, the only scheme it could ever be answered over.
      ("git.example.org", ["https://git.example.org"]),
    ])
  func eachHostGetsTheSchemesTheHelperAnswers(host: String, expected: [String]) {
    #expect(F.chooser().servedURLs(of: host, accounts: F.issuerAccounts).map(\.description) == expected)
  }

  @Test func whatTheURLsSayIsWhatTheHelperAnswers() {
    let chooser = F.chooser()
    for host in chooser.servedHosts(accounts: F.issuerAccounts) {
      let urls = chooser.servedURLs(of: host, accounts: F.issuerAccounts)
      for scheme in ["https", "http"] {
        let configured = urls.contains { $0.scheme == scheme }
        let answered = chooser.serves(CredentialRequest(scheme: scheme, host: host), accounts: F.issuerAccounts)
        #expect(configured == answered, "\(scheme)://\(host)")
      }
    }
  }
}
