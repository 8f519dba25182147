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
  let clock: any WallClock
  let warn: @Sendable (String) -> Void

  /// An account chosen for a request, with the git settings of its type.
  struct Choice {
    var account: Account
    var git: GitIntegration
    /// The account's tokens as the search that chose it found them, when it read them.
    var stored: StoredAccount? = nil
  }

  /// The answer to `get`, or nil to let git go on.
  func get(
    _ request: CredentialMessage, freshTokens: (AccountKey) async throws -> TokenSet
  ) async throws
    -> CredentialMessage?
  {
    guard let choice = try choose(for: request) else { return nil }
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
    guard let choice = try choose(for: request, quiet: true),
      var stored = try store.load(choice.account.key)
    else { return }
    // Another helper's password, or one we already replaced, is not ours to judge.
    if let password = request["password"] ?? request["credential"], password != stored.tokens.accessToken { return }
    stored.tokens.expiresAt = clock.now.addingTimeInterval(-1)
    try store.save(stored.account, tokens: stored.tokens)
  }

  /// The one account that should answer `request`, or nil (explained on standard error
  /// unless `quiet`) when there is none or no single one.
  func choose(for request: CredentialMessage, quiet: Bool = false) throws -> Choice? {
    let say: (String) -> Void = { if !quiet { warn($0) } }
    guard let scheme = request["protocol"]?.lowercased(), let host = request["host"]?.lowercased() else { return nil }
    let serving = registry.all.map(\.descriptor).filter { descriptor in
      guard let git = descriptor.git, git.hosts.contains(where: { $0.lowercased() == host }) else { return false }
      return scheme == "https" || (scheme == "http" && Self.isLoopback(host) && Self.hasLoopbackEndpoints(descriptor))
    }
    // No type of ours serves this host (or not over this protocol): not our business.
    guard !serving.isEmpty else { return nil }
    let types = Dictionary(uniqueKeysWithValues: serving.compactMap { d in d.git.map { (d.id, $0) } })

    if let named = environment["TOKENCTL_ACCOUNT"], !named.isEmpty {
      let reference = AccountReference(parsing: named, knownTypes: Set(registry.ids))
      let account = try reference.resolve(in: store).account
      guard let git = types[account.type] else {
        // TOKENCTL_ACCOUNT chooses among accounts; it never widens where a token may go.
        say("TOKENCTL_ACCOUNT names \(account.qualifiedName), whose type does not serve \(host); not sending its token")
        return nil
      }
      return Choice(account: account, git: git)
    }

    let accounts = try accountsServing(serving)
    var candidates = accounts
    if let username = request["username"], !username.isEmpty {
      let named = accounts.filter { $0.account.name == username || $0.account.id == username }
      if !named.isEmpty { candidates = named }
    }
    switch candidates.count {
    case 0:
      let logins = serving.map { "tokenctl login \($0.id)" }.joined(separator: "' or '")
      say("no account for \(host): run '\(logins)' to sign in")
      return nil
    case 1:
      guard let git = types[candidates[0].account.type] else { return nil }
      return Choice(account: candidates[0].account, git: git, stored: candidates[0].stored)
    default:
      let list = candidates.map { "  \($0.account.qualifiedName)" }.sorted().joined(separator: "\n")
      say(
        "\(candidates.count) accounts serve \(host):\n\(list)\n"
          + "Choose one with TOKENCTL_ACCOUNT=TYPE:NAME, or put it in the remote URL: https://NAME@\(host)/…")
      return nil
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

  /// Whether `host` (perhaps with a port) is this machine.
  static func isLoopback(_ host: String) -> Bool {
    var name = host
    if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
      name = String(name[name.index(after: name.startIndex)..<close])
    } else if let colon = name.lastIndex(of: ":"), name.firstIndex(of: ":") == colon {
      name = String(name[..<colon])
    }
    return name == "localhost" || name == "::1" || name.hasPrefix("127.")
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
