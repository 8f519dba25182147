import CredentialHelpers
import Foundation
import TokenKit

/// The account types and accounts the chooser's tables are written against.
enum ChooserFixtures {
  static let now = Date(timeIntervalSince1970: 1_800_000_000)

  static let github = GitAccountType(
    id: "github", git: GitIntegration(hosts: ["github.com"], username: .literal("oauth2")))
  static let gitlab = GitAccountType(
    id: "gitlab", git: GitIntegration(hosts: ["gitlab.com"], username: .literal("oauth2")))
  /// A second type for github.com, written in capitals, that takes bearer tokens.
  static let mirror = GitAccountType(
    id: "mirror", git: GitIntegration(hosts: ["GitHub.com"], username: .accountName, bearer: true))
  /// A forge that lists no hosts and has no configured issuer: only its accounts name hosts.
  static let gitea = GitAccountType(id: "gitea", git: GitIntegration(hosts: [], username: .literal("oauth2")))
  /// A forge that lists no hosts, configured for one instance.
  static let forge = GitAccountType(
    id: "forge", git: GitIntegration(hosts: [], username: .literal("oauth2")),
    configuredIssuer: URL(string: "https://forge.example/"))
  /// Git hosts on this machine with an authorization server on this machine: the tests' setup.
  static let local = GitAccountType(
    id: "local",
    git: GitIntegration(hosts: ["127.0.0.1:8080", "localhost:3000", "[::1]:8080"], username: .accountName),
    hasLoopbackServer: true)
  /// A git host on this machine whose authorization server is elsewhere.
  static let lan = GitAccountType(
    id: "lan", git: GitIntegration(hosts: ["127.0.0.1:9090"], username: .accountName), hasLoopbackServer: false)

  static let types = [github, gitlab, mirror, gitea, forge, local, lan]

  static func chooser(rules: [String: String] = [:], requestedAccount: String? = nil) -> CredentialAccountChooser {
    // `graph` serves no git host, yet an account reference may name it.
    CredentialAccountChooser(
      types: types, knownTypes: Set(types.map(\.id) + ["graph"]), rules: rules, requestedAccount: requestedAccount)
  }

  static func account(_ type: String, _ id: String, _ name: String, issuer: String? = nil) -> Account {
    Account(type: type, id: id, name: name, group: "default", createdAt: now, updatedAt: now, issuer: issuer)
  }

  /// Accounts of the types without hosts, by type id.
  static let issuerAccounts: [String: [Account]] = [
    "gitea": [
      account("gitea", "g1", "ada", issuer: "https://codeberg.org/"),
      account("gitea", "g2", "ada", issuer: "https://Git.Corp.example:3000/"),
      account("gitea", "g3", "bob", issuer: "http://127.0.0.1:3000/"),
      // No recorded issuer and none configured: it serves no host.
      account("gitea", "g4", "eve"),
    ],
    "forge": [
      // No recorded issuer: the configured one's host.
      account("forge", "f1", "ada"),
      account("forge", "f2", "bob", issuer: "https://codeberg.org/"),
    ],
  ]

  static func request(
    _ scheme: String, _ host: String, path: String? = nil, username: String? = nil
  )
    -> CredentialRequest
  {
    CredentialRequest(scheme: scheme, host: host, path: path, username: username)
  }

  /// A selection in a few words, for tables.
  static func describe(_ selection: CredentialSelection) -> String {
    switch selection {
    case .account(let choice):
      return "account \(choice.account.key)" + (choice.stored == nil ? "" : " with tokens")
    case .notOurs:
      return "not ours"
    case .declined(.noAccount(let types, let host)):
      return "no account of \(types.joined(separator: ",")) for \(host)"
    case .declined(.notSignedIn(let named)):
      return "not signed in: \(named.reference) by \(describe(named.source))"
    case .declined(.doesNotServeHost(let account, let named, let host)):
      return "\(account.key) by \(describe(named.source)) does not serve \(host)"
    case .declined(.ruleForUnservedHost(let named, let host)):
      return "\(named.reference) by \(describe(named.source)) for \(host), which no type serves"
    case .declined(.ambiguous(let accounts, let host)):
      return "ambiguous on \(host): " + accounts.map(\.key.description).joined(separator: ",")
    }
  }

  static func describe(_ source: NamedAccount.Source) -> String {
    switch source {
    case .environment: return "TOKENCTL_ACCOUNT"
    case .rule(let prefix): return prefix
    }
  }
}
