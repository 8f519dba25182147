import GitCredentialHelper
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Answers git's credential requests (git-credential(1)) with the tokens of the account
/// that serves the request's host.
///
/// Printing nothing is the usual way to decline: git then asks the next helper or the
/// user. Why we declined goes to standard error, never a token.
struct CredentialHelper {
  /// Seconds a token handed to git must stay valid: long enough for a clone or a push to
  /// start, so the first command after expiry does not fail.
  static let minimumValidity: Double = 60

  let registry: AccountTypeRegistry
  let store: any TokenStore
  let environment: [String: String]
  /// `[git.accounts]` of config.toml: account references by remote URL prefix.
  var rules: [String: String] = [:]
  let clock: any WallClock
  let warn: @Sendable (String) -> Void

  /// An account chosen for a request, with the git settings of its type.
  struct Choice {
    var account: Account
    var git: GitIntegration
    /// The account's tokens as the search that chose it found them, when it read them.
    var stored: StoredAccount? = nil
  }

  /// What `choose` found for a request.
  enum Selection {
    /// The one account to answer with.
    case account(Choice)
    /// Types serve the host but no account of theirs is signed in.
    case noAccount(types: [String], host: String)
    /// Not ours to answer, or no single answer; explained on standard error where useful.
    case declined
  }

  /// The answer to `get`, or nil to let git go on.
  ///
  /// When types serve the host but no account is signed in, `signIn` may sign one in (it
  /// returns whether it did); without it, or when it declines, the user is told which
  /// `tokenctl login` to run.
  func get(
    _ request: CredentialMessage, freshTokens: (AccountKey) async throws -> TokenSet,
    signIn: ((_ types: [String], _ host: String) async throws -> Bool)? = nil
  ) async throws
    -> CredentialMessage?
  {
    var selection = try choose(for: request)
    if case .noAccount(let types, let host) = selection {
      if let signIn, try await signIn(types, host) {
        selection = try choose(for: request)
      } else {
        let logins = types.map { "tokenctl login \($0)" }.joined(separator: "' or '")
        warn("no account for \(host): run '\(logins)' to sign in")
      }
    }
    guard case .account(let choice) = selection else { return nil }
    try ServiceConfiguration.requireRecordedIssuer(
      of: choice.account, in: try registry.descriptor(choice.account.type))
    // A token valid long enough is answered as the refresher's own first step would answer
    // it, without a second keyring search or reading the configuration again; anything
    // else goes through the refresher (lock, re-read, refresh).
    let tokens: TokenSet
    if let stored = choice.stored, stored.tokens.isValid(forAtLeast: Self.minimumValidity, clock: clock) {
      tokens = stored.tokens
    } else {
      tokens = try await freshTokens(choice.account.key)
    }
    var answer = CredentialMessage()
    if choice.git.bearer, request.values("capability").contains("authtype") {
      answer.append("capability", "authtype")
      answer["authtype"] = "Bearer"
      answer["credential"] = tokens.accessToken
    } else {
      switch choice.git.username {
      case .literal(let name): answer["username"] = name
      case .accountName: answer["username"] = choice.account.name
      }
      answer["password"] = tokens.accessToken
    }
    if let expiry = tokens.expiresAt {
      answer["password_expiry_utc"] = String(Int(expiry.timeIntervalSince1970))
    }
    return answer
  }

  /// Git says the credential it got was refused: mark the account's access token expired
  /// so the next `get` refreshes. The refresh token is kept; it may well still be good.
  func erase(_ request: CredentialMessage) throws {
    guard case .account(let choice) = try choose(for: request, quiet: true),
      var stored = try store.load(choice.account.key)
    else { return }
    // Another helper's password, or one we already replaced, is not ours to judge.
    if let password = request["password"] ?? request["credential"], password != stored.tokens.accessToken { return }
    stored.tokens.expiresAt = clock.now.addingTimeInterval(-1)
    try store.save(stored.account, tokens: stored.tokens)
  }

  /// The one account that should answer `request`, if any; why there is none or no
  /// single one is said on standard error unless `quiet`.
  func choose(for request: CredentialMessage, quiet: Bool = false) throws -> Selection {
    let say: (String) -> Void = { if !quiet { warn($0) } }
    guard let scheme = request["protocol"]?.lowercased(), let host = request["host"]?.lowercased() else {
      return .declined
    }
    let plainAllowed = scheme == "http" && Self.isLoopback(host)
    let descriptors = registry.all.map(\.descriptor).filter { $0.git != nil }
    var serving = descriptors.filter { descriptor in
      guard let hosts = descriptor.git?.hosts, hosts.contains(where: { $0.lowercased() == host }) else {
        return false
      }
      return scheme == "https" || (plainAllowed && Self.hasLoopbackEndpoints(descriptor))
    }
    // A forge type that lists no hosts (Gitea: the instance is the user's choice) serves
    // the host of an issuer: the one each account signed in to, else the configured one.
    // Only accounts of that host are candidates, so a token never crosses instances.
    // Finding them takes a keyring search per such type, so it is done only for hosts no
    // type names (github.com and company are answered without it).
    var issuerAccounts: [String: [Account]] = [:]
    if serving.isEmpty {
      serving = try descriptors.filter { descriptor in
        guard descriptor.git?.hosts.isEmpty == true else { return false }
        let configured: URL? = if case .discovered(let issuer) = descriptor.endpoints { issuer } else { nil }
        func serves(_ issuer: URL?) -> Bool {
          guard let issuer, Self.gitHost(issuer) == host else { return false }
          return scheme == "https" || (plainAllowed && issuer.scheme == "http")
        }
        let accounts = try store.list(AccountQuery(type: descriptor.id)).map(\.account).filter { account in
          serves(account.issuer.flatMap { URL(string: $0) } ?? configured)
        }
        issuerAccounts[descriptor.id] = accounts
        return !accounts.isEmpty || serves(configured)
      }
    }
    // No type of ours serves this host (or not over this protocol): not our business.
    guard !serving.isEmpty else { return .declined }
    let types = Dictionary(uniqueKeysWithValues: serving.compactMap { d in d.git.map { (d.id, $0) } })

    // An account named by the user, in the environment or by a rule, is the answer or
    // the reason there is none; it chooses among accounts but never widens where a token
    // may go.
    func named(_ name: String, by source: String) throws -> Selection {
      let reference = AccountReference(parsing: name, knownTypes: Set(registry.ids))
      let account: Account
      do {
        account = try reference.resolve(in: store).account
      } catch let error as TokenKitError where error.code == .noSuchAccount {
        say("\(source) names \(name), which is not signed in: run 'tokenctl login \(reference.type ?? "TYPE")'")
        return .declined
      }
      let servesHost = issuerAccounts[account.type].map { $0.contains { $0.key == account.key } } ?? true
      guard let git = types[account.type], servesHost else {
        say("\(source) names \(account.qualifiedName), whose type does not serve \(host); not sending its token")
        return .declined
      }
      return .account(Choice(account: account, git: git))
    }
    if let name = environment["TOKENCTL_ACCOUNT"], !name.isEmpty {
      return try named(name, by: "TOKENCTL_ACCOUNT")
    }
    let path = request["path"]
    let rule = rules.compactMap { prefix, name in
      GitRemotePrefix(prefix)?.match(scheme: scheme, host: host, path: path).map { (prefix, name, $0) }
    }.max { ($0.2, $1.0) < ($1.2, $0.0) }
    if let (prefix, name, _) = rule {
      return try named(name, by: "the rule for \(prefix) in config.toml")
    }

    // Accounts of issuer-host types were listed above; the others come with their tokens.
    let accounts =
      try accountsServing(serving.filter { issuerAccounts[$0.id] == nil })
      + serving.flatMap { descriptor in
        (issuerAccounts[descriptor.id] ?? []).map { (account: $0, stored: StoredAccount?.none) }
      }
    var candidates = accounts
    if let username = request["username"], !username.isEmpty {
      let named = accounts.filter { $0.account.name == username || $0.account.id == username }
      if !named.isEmpty { candidates = named }
    }
    switch candidates.count {
    case 0:
      return quiet ? .declined : .noAccount(types: serving.map(\.id), host: host)
    case 1:
      guard let git = types[candidates[0].account.type] else { return .declined }
      return .account(Choice(account: candidates[0].account, git: git, stored: candidates[0].stored))
    default:
      let list = candidates.map { "  \($0.account.qualifiedName)" }.sorted().joined(separator: "\n")
      say(
        "\(candidates.count) accounts serve \(host):\n\(list)\n"
          + "Choose one with TOKENCTL_ACCOUNT=TYPE:NAME, with a rule under [git.accounts] in config.toml, "
          + "or by putting it in the remote URL: https://NAME@\(host)/…")
      return .declined
    }
  }

  /// The accounts of the serving types, with their tokens: one keyring search that reads
  /// attributes and secrets together, where a listing and then a load took two. When it
  /// throws (a damaged item among them, say), the listing chooses as before: it skips
  /// such items, and reports every other failure as it always did.
  private func accountsServing(
    _ serving: [EndpointDescriptor]
  ) throws -> [(account: Account, stored: StoredAccount?)] {
    do {
      return try serving.flatMap { try store.loadAll(AccountQuery(type: $0.id)).map { ($0.account, $0) } }
    } catch {
      return try serving.flatMap { try store.list(AccountQuery(type: $0.id)).map { ($0.account, nil) } }
    }
  }

  /// Whether `host` as git sends it (perhaps with a port) is this machine.
  static func isLoopback(_ host: String) -> Bool {
    var name = host
    if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
      name = String(name[name.index(after: name.startIndex)..<close])
    } else if let colon = name.lastIndex(of: ":"), name.firstIndex(of: ":") == colon {
      name = String(name[..<colon])
    }
    return Loopback.isLoopback(host: name)
  }

  /// Every git host the types serve: their own lists, and for types that list none, the
  /// hosts of the configured issuer and of the issuers their accounts signed in to.
  /// Accounts that cannot be read add nothing: the listed hosts are still worth knowing.
  func servedHosts() -> [String] {
    var hosts = Set<String>()
    for descriptor in registry.all.map(\.descriptor) {
      guard let git = descriptor.git else { continue }
      guard git.hosts.isEmpty else {
        hosts.formUnion(git.hosts.map { $0.lowercased() })
        continue
      }
      if case .discovered(let issuer) = descriptor.endpoints, let host = Self.gitHost(issuer) { hosts.insert(host) }
      let accounts = (try? store.list(AccountQuery(type: descriptor.id))) ?? []
      hosts.formUnion(accounts.compactMap { $0.account.issuer.flatMap { URL(string: $0) }.flatMap(Self.gitHost) })
    }
    return hosts.sorted()
  }

  /// A URL's host as git names it in a request: lowercased, with the port when there is one.
  static func gitHost(_ url: URL) -> String? {
    guard let host = url.host()?.lowercased(), !host.isEmpty else { return nil }
    return url.port.map { "\(host):\($0)" } ?? host
  }

  /// Whether the type's authorization server is on this machine: only then may plain
  /// http carry its tokens, as in the tests.
  static func hasLoopbackEndpoints(_ descriptor: EndpointDescriptor) -> Bool {
    switch descriptor.endpoints {
    case .fixed(let endpoints): return isLoopback(endpoints.token.host() ?? "")
    case .discovered(let issuer): return isLoopback(issuer.host() ?? "")
    case .discoveredFromUserIssuer: return false
    }
  }
}
