import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Which account answers a git credential request: the policy, on values alone.
///
/// The rules, in the order they apply:
/// 1. Only types that serve the request's host take part (``typesListingHost(of:)``). A
///    type serves the hosts it lists, over https; plain http only to a loopback host, and
///    only when the type's authorization server is on this machine too, as in the tests.
///    A type that lists no hosts (a forge whose instance is the user's choice) serves the
///    host of an issuer: the one each of its accounts signed in to, else the configured
///    one (``typesServingIssuerHost(of:accounts:)``). Only its accounts of that host may
///    answer, so a token never crosses instances.
/// 2. An account the user named (``namedAccount(for:)``), in `TOKENCTL_ACCOUNT` or by the
///    `[git.accounts]` rule with the longest matching URL prefix, is the answer or the
///    reason there is none (``select(_:resolvedTo:serving:for:)``): a name chooses among
///    accounts but never widens where a token may go.
/// 3. Otherwise the accounts of the serving types are the candidates, narrowed to those
///    the URL's username names if it names any, and only a single one may answer
///    (``select(among:serving:for:)``).
///
/// It reads nothing: between the steps the caller reads the store, as little as the
/// answer needs. A host some type lists costs one keyring search that brings the tokens
/// along; the accounts of types that list no hosts are listed only for hosts no type lists;
/// a named account is looked up alone.
public struct CredentialAccountChooser: Sendable {
  /// The types whose tokens are for git, in the registry's order.
  public var types: [GitAccountType]
  /// Every type id, git's or not: what the type in an account reference may be.
  public var knownTypes: Set<String>
  /// `[git.accounts]` of config.toml: account references by remote URL prefix.
  public var rules: [String: String]
  /// `TOKENCTL_ACCOUNT`: the account to answer with, when its type serves the host.
  public var requestedAccount: String?

  public init(
    types: [GitAccountType], knownTypes: Set<String>, rules: [String: String] = [:], requestedAccount: String? = nil
  ) {
    self.types = types
    self.knownTypes = knownTypes
    self.rules = rules
    self.requestedAccount = requestedAccount
  }

  /// The policy for the types of `registry`.
  public init(registry: AccountTypeRegistry, rules: [String: String] = [:], requestedAccount: String? = nil) {
    self.init(
      types: registry.all.compactMap { GitAccountType($0.descriptor) }, knownTypes: Set(registry.ids),
      rules: rules, requestedAccount: requestedAccount)
  }

  /// The types that serve a request's host, and what choosing them found out.
  public struct ServingTypes: Sendable, Hashable {
    /// In the registry's order; empty when the host is not ours.
    public var types: [GitAccountType]
    /// For types that serve an issuer's host, their accounts on that host, which choosing
    /// the types had to read. The accounts of the other types are still to be read.
    public var accountsOnHost: [String: [Account]]

    public init(_ types: [GitAccountType], accountsOnHost: [String: [Account]] = [:]) {
      self.types = types
      self.accountsOnHost = accountsOnHost
    }

    /// The types whose accounts are still to be read.
    public var typesToRead: [GitAccountType] { types.filter { accountsOnHost[$0.id] == nil } }

    func type(_ id: String) -> GitAccountType? { types.first { $0.id == id } }
  }

  /// An account that may answer, with its tokens when the search that found it read them.
  public struct Candidate: Sendable, Hashable {
    public var account: Account
    public var stored: StoredAccount?

    public init(_ account: Account, stored: StoredAccount? = nil) {
      self.account = account
      self.stored = stored
    }
  }

  // MARK: 1. The types that serve the host

  /// The types whose list of hosts names the request's host.
  ///
  /// When there are none, the types that list no hosts may still serve it: list their
  /// accounts (``typesWithoutHosts``) and ask ``typesServingIssuerHost(of:accounts:)``.
  public func typesListingHost(of request: CredentialRequest) -> ServingTypes {
    ServingTypes(
      types.filter { type in
        type.git.hosts.contains { $0.lowercased() == request.host }
          && (request.scheme == "https" || (request.isPlainHTTPToLoopback && type.hasLoopbackServer))
      })
  }

  /// The types that serve the request's host: those that list it, else those without
  /// hosts whose issuer is there. `accounts` (every account of ``typesWithoutHosts`` by
  /// type id) is asked for only when no type lists the host.
  public func servingTypes(
    of request: CredentialRequest, accounts: () throws -> [String: [Account]]
  ) rethrows -> ServingTypes {
    let listing = typesListingHost(of: request)
    guard listing.types.isEmpty else { return listing }
    return typesServingIssuerHost(of: request, accounts: try accounts())
  }

  /// The rule of ``rules`` for `prefix` when it can never apply: the account it names is of
  /// a type that does not serve the prefix's host (by ``servingTypes(of:accounts:)``), so
  /// `get` declines there. nil when the rule can apply, or when which type it names is not
  /// known (`type`: the named account's, when it names none itself). For `doctor`.
  public func ruleThatCannotApply(
    prefix: String, type: String?, accounts: [String: [Account]]
  ) -> (host: String, type: String)? {
    guard let name = rules[prefix], let parsed = GitRemotePrefix(prefix),
      let named = reference(name).type ?? type
    else { return nil }
    let request = CredentialRequest(scheme: parsed.scheme, host: parsed.host)
    guard servingTypes(of: request, accounts: { accounts }).type(named) == nil else { return nil }
    return (parsed.host, named)
  }

  /// The types that list no git hosts and serve their issuers' hosts instead.
  public var typesWithoutHosts: [GitAccountType] { types.filter { $0.git.hosts.isEmpty } }

  /// The types without hosts that serve the request's host, with their accounts there.
  ///
  /// `accounts` holds every account of each of ``typesWithoutHosts`` by type id; a type
  /// serves the host when one of its accounts signed in to an issuer there, or when its
  /// configured issuer is there.
  public func typesServingIssuerHost(of request: CredentialRequest, accounts: [String: [Account]]) -> ServingTypes {
    var serving = ServingTypes([])
    for type in typesWithoutHosts {
      let onHost = (accounts[type.id] ?? []).filter { account in
        serves(account.issuer.flatMap { URL(string: $0) } ?? type.configuredIssuer, request)
      }
      guard !onHost.isEmpty || serves(type.configuredIssuer, request) else { continue }
      serving.types.append(type)
      serving.accountsOnHost[type.id] = onHost
    }
    return serving
  }

  /// Whether tokens from `issuer` may go to the request's host: it is the issuer's host,
  /// over https, or over plain http when both are this machine.
  private func serves(_ issuer: URL?, _ request: CredentialRequest) -> Bool {
    guard let issuer, GitHost.name(of: issuer) == request.host else { return false }
    return request.scheme == "https" || (request.isPlainHTTPToLoopback && issuer.scheme == "http")
  }

  // MARK: 2. An account the user named

  /// The account named for the request: by `TOKENCTL_ACCOUNT`, else by the `[git.accounts]`
  /// rule whose prefix matches the remote longest (of two as long, such as `https://host`
  /// and `https://host/`, the one that sorts first, so the answer never depends on the
  /// order of a dictionary). Look it up and pass it to ``select(_:resolvedTo:serving:for:)``.
  public func namedAccount(for request: CredentialRequest) -> NamedAccount? {
    if let name = requestedAccount, !name.isEmpty {
      return NamedAccount(reference(name), by: .environment)
    }
    let matches = rules.compactMap { prefix, name in
      GitRemotePrefix(prefix)?.match(scheme: request.scheme, host: request.host, path: request.path)
        .map { (prefix: prefix, name: name, length: $0) }
    }
    guard let rule = matches.max(by: { ($0.length, $1.prefix) < ($1.length, $0.prefix) }) else { return nil }
    return NamedAccount(reference(rule.name), by: .rule(prefix: rule.prefix))
  }

  private func reference(_ name: String) -> AccountReference {
    AccountReference(parsing: name, knownTypes: knownTypes)
  }

  /// The answer when the user named an account: `account` is the one the name resolved
  /// to, nil when no such account is signed in.
  public func select(
    _ named: NamedAccount, resolvedTo account: Account?, serving: ServingTypes, for request: CredentialRequest
  ) -> CredentialSelection {
    guard !serving.types.isEmpty else { return .notOurs }
    guard let account else { return .declined(.notSignedIn(named)) }
    let onHost = serving.accountsOnHost[account.type].map { $0.contains { $0.key == account.key } } ?? true
    guard let type = serving.type(account.type), onHost else {
      return .declined(.doesNotServeHost(account, namedBy: named, host: request.host))
    }
    return .account(CredentialChoice(account: account, git: type.git))
  }

  // MARK: 3. The accounts of the serving types

  /// The answer from the accounts of the serving types: `candidates` are those of
  /// `serving.typesToRead`; the others' are in `serving` already.
  public func select(
    among candidates: [Candidate], serving: ServingTypes, for request: CredentialRequest
  ) -> CredentialSelection {
    guard !serving.types.isEmpty else { return .notOurs }
    let all = candidates + serving.types.flatMap { (serving.accountsOnHost[$0.id] ?? []).map { Candidate($0) } }
    let chosen = narrowed(all, to: request.username)
    switch chosen.count {
    case 0:
      return .declined(.noAccount(types: serving.types.map(\.id), host: request.host))
    case 1:
      guard let type = serving.type(chosen[0].account.type) else { return .notOurs }
      return .account(CredentialChoice(account: chosen[0].account, git: type.git, stored: chosen[0].stored))
    default:
      return .declined(.ambiguous(chosen.map(\.account), host: request.host))
    }
  }

  /// The candidates the URL's username names by display name or id, when it names any;
  /// else all of them, since the username may be the one the host wants (`oauth2`).
  private func narrowed(_ candidates: [Candidate], to username: String?) -> [Candidate] {
    guard let username, !username.isEmpty else { return candidates }
    let named = candidates.filter { $0.account.name == username || $0.account.id == username }
    return named.isEmpty ? candidates : named
  }

  // MARK: Hosts for setup-git and doctor

  /// Whether some type serves `request`'s scheme and host (rule 1), so that the helper
  /// answers it once an account is there. `accounts` are those of ``typesWithoutHosts``
  /// by type id, as for ``typesServingIssuerHost(of:accounts:)``.
  public func serves(_ request: CredentialRequest, accounts: [String: [Account]]) -> Bool {
    !typesListingHost(of: request).types.isEmpty
      || !typesServingIssuerHost(of: request, accounts: accounts).types.isEmpty
  }

  /// The URLs git must ask the helper about for `host`: each scheme the helper answers
  /// there, https first; https alone for a host no type serves yet (an instance whose
  /// first account is still to sign in), since https is all the helper may ever answer for
  /// a host that is not this machine.
  public func servedURLs(of host: String, accounts: [String: [Account]]) -> [GitServedURL] {
    let served = ["https", "http"].map { GitServedURL(scheme: $0, host: host) }.filter {
      serves($0.request, accounts: accounts)
    }
    return served.isEmpty ? [GitServedURL(scheme: "https", host: host)] : served
  }

  /// Every git host the types serve: the hosts they list, and for types that list none,
  /// the host of the configured issuer and of the issuers their `accounts` signed in to.
  public func servedHosts(accounts: [String: [Account]]) -> [String] {
    var hosts = Set<String>()
    for type in types {
      guard type.git.hosts.isEmpty else {
        hosts.formUnion(type.git.hosts.map { $0.lowercased() })
        continue
      }
      if let host = type.configuredIssuer.flatMap(GitHost.name(of:)) { hosts.insert(host) }
      hosts.formUnion(
        (accounts[type.id] ?? []).compactMap { $0.issuer.flatMap { URL(string: $0) }.flatMap(GitHost.name(of:)) })
    }
    return hosts.sorted()
  }
}
