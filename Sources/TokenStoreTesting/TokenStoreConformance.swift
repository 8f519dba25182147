import Synchronization
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The behaviour every `TokenStore` must show, as swift-log ships a test every
/// `LogHandler` must pass.
///
/// Run each check from a parameterized test, giving it a way to make stores:
///
/// ```swift
/// @Test(arguments: TokenStoreConformance.checks)
/// func conformance(_ check: TokenStoreConformance.Check) throws {
///   try check.run { group in MyStore(group: group) }
/// }
/// ```
///
/// Each run asks for fresh group names, so checks never see each other's accounts, and
/// removes what it saved.
public enum TokenStoreConformance {
  /// Makes a store bound to `group`. Stores made for different groups must share their
  /// backing, as two tools on one keyring do.
  public typealias Factory = @Sendable (_ group: String) throws -> any TokenStore

  /// One named requirement.
  public struct Check: Sendable, CustomStringConvertible {
    public let name: String
    let body: @Sendable (Factory) throws -> Void
    public var description: String { name }

    /// Runs the check against stores made by `factory`.
    public func run(_ factory: @escaping Factory) throws { try body(factory) }
  }

  /// Every check.
  public static let checks: [Check] = [
    Check(name: "a saved account loads back with its tokens") { factory in
      let store = try factory(freshGroup())
      let saved = sampleAccount(group: store.group)
      try store.save(saved.account, tokens: saved.tokens)
      defer { _ = try? store.remove(saved.account.key) }
      try expectEqual(try store.load(saved.account.key), saved)
    },
    Check(name: "loading an absent account gives nil") { factory in
      let store = try factory(freshGroup())
      try expectEqual(try store.load(AccountKey(type: "graph", id: "nobody")), nil)
      try expect(try store.list(.all).isEmpty, "store.list(.all).isEmpty")
    },
    Check(name: "list shows the accounts and token summaries that match the query") { factory in
      let store = try factory(freshGroup())
      let ada = sampleAccount(group: store.group)
      let grace = sampleAccount(group: store.group, type: "oidc", id: "grace-id", name: "grace@example.org")
      try save([ada, grace], in: store)
      defer { removeQuietly([ada, grace], from: store) }

      let all = try store.list(.all)
      try expectEqual(
        Set(all),
        [
          AccountListing(account: ada.account, tokens: ada.tokens.summary),
          AccountListing(account: grace.account, tokens: grace.tokens.summary),
        ])
      try expectEqual(try store.list(AccountQuery(type: "oidc")).map(\.account), [grace.account])
      try expectEqual(try store.list(AccountQuery(name: "ada@contoso.com")).map(\.account), [ada.account])
      try expectEqual(try store.list(AccountQuery(id: "grace-id")).map(\.account), [grace.account])
      try expect(
        try store.list(AccountQuery(type: "graph", name: "grace@example.org")).isEmpty,
        "store.list(AccountQuery(type: 'graph', name: 'grace@example.org')).isEmpty")
    },
    Check(name: "loadAll returns the matching accounts with their tokens") { factory in
      let store = try factory(freshGroup())
      let ada = sampleAccount(group: store.group)
      let grace = sampleAccount(group: store.group, type: "oidc", id: "grace-id", name: "ada@contoso.com")
      try save([ada, grace], in: store)
      defer { removeQuietly([ada, grace], from: store) }

      try expectEqual(Set(try store.loadAll(AccountQuery(name: "ada@contoso.com"))), [ada, grace])
      try expectEqual(try store.loadAll(AccountQuery(type: "oidc")), [grace])
      try expect(
        try store.loadAll(AccountQuery(id: "nobody")).isEmpty, "store.loadAll(AccountQuery(id: 'nobody')).isEmpty")
    },
    Check(name: "a service account is listed and loaded as one, with no refresh token") { factory in
      let store = try factory(freshGroup())
      var service = sampleAccount(group: store.group, type: "oidc", id: "client-1", name: "client-1")
      service.account.isServiceAccount = true
      service.tokens.refreshToken = nil
      let person = sampleAccount(group: store.group)
      try save([service, person], in: store)
      defer { removeQuietly([service, person], from: store) }
      try expectEqual(try store.load(service.account.key), service)
      try expectEqual(try store.load(person.account.key)?.account.isServiceAccount, false)
      let listed = try store.list(AccountQuery(type: "oidc"))
      try expectEqual(listed.map(\.account), [service.account])
      try expect(listed.allSatisfy { $0.renewable && !$0.tokens.refreshable }, "a service account is renewable")
    },
    Check(name: "saving an existing account replaces it, leaving one account") { factory in
      let store = try factory(freshGroup())
      let first = sampleAccount(group: store.group)
      try store.save(first.account, tokens: first.tokens)
      defer { _ = try? store.remove(first.account.key) }

      var renamed = first.account
      renamed.name = "ada.lovelace@contoso.com"
      renamed.updatedAt = first.account.updatedAt.addingTimeInterval(60)
      // A rejected refresh token is recorded on the account, and survives the round trip.
      renamed.needsSignIn = true
      let rotated = TokenSet(
        accessToken: "access-2", refreshToken: "refresh-2", idToken: nil,
        expiresAt: first.tokens.expiresAt!.addingTimeInterval(3600), scope: ["User.Read"])
      try store.save(renamed, tokens: rotated)

      try expectEqual(try store.load(first.account.key), StoredAccount(account: renamed, tokens: rotated))
      try expectEqual(try store.list(.all).map(\.account), [renamed])
    },
    Check(name: "a concurrent reader sees the old or the new token set whole") { factory in
      let store = try factory(freshGroup())
      let base = sampleAccount(group: store.group)
      try store.save(base.account, tokens: tokens(generation: 0))
      defer { _ = try? store.remove(base.account.key) }

      let torn = Mutex<[String]>([])
      let generations = 12
      ParallelThreads.run(
        writer: {
          for generation in 1...generations {
            try? store.save(base.account, tokens: tokens(generation: generation))
          }
        },
        reader: {
          for _ in 0..<generations {
            guard let loaded = try? store.load(base.account.key) else {
              torn.withLock { $0.append("account vanished during a replace") }
              continue
            }
            let access = loaded.tokens.accessToken.dropFirst("access-".count)
            let refresh = loaded.tokens.refreshToken?.dropFirst("refresh-".count)
            if access != refresh { torn.withLock { $0.append("access \(access) with refresh \(refresh ?? "nil")") } }
          }
        })
      try expectEqual(torn.withLock { $0 }, [])
      try expectEqual(try store.load(base.account.key)?.tokens, tokens(generation: generations))
      try expectEqual(try store.list(.all).count, 1)
    },
    Check(name: "remove deletes the account and says whether there was one") { factory in
      let store = try factory(freshGroup())
      let saved = sampleAccount(group: store.group)
      try store.save(saved.account, tokens: saved.tokens)
      try expect(try store.remove(saved.account.key), "store.remove(saved.account.key)")
      try expectEqual(try store.load(saved.account.key), nil)
      try expect(try store.list(.all).isEmpty, "store.list(.all).isEmpty")
      try expectEqual(try store.remove(saved.account.key), false)
    },
    Check(name: "stores of two groups do not see each other's accounts") { factory in
      let work = try factory(freshGroup())
      let home = try factory(freshGroup())
      let atWork = sampleAccount(group: work.group)
      var atHomeAccount = atWork.account
      atHomeAccount.group = home.group
      let atHome = StoredAccount(account: atHomeAccount, tokens: tokens(generation: 7))
      try work.save(atWork.account, tokens: atWork.tokens)
      defer { _ = try? work.remove(atWork.account.key) }

      try expect(try home.list(.all).isEmpty, "home.list(.all).isEmpty")
      try expectEqual(try home.load(atWork.account.key), nil)
      try expectEqual(try home.remove(atWork.account.key), false)

      // The same key in the other group is a separate account.
      try home.save(atHome.account, tokens: atHome.tokens)
      defer { _ = try? home.remove(atHome.account.key) }
      try expectEqual(try work.load(atWork.account.key), atWork)
      try expectEqual(try home.load(atHome.account.key), atHome)
    },
    Check(name: "saving an account of another group is refused") { factory in
      let store = try factory(freshGroup())
      let other = sampleAccount(group: freshGroup())
      do {
        try store.save(other.account, tokens: other.tokens)
        throw ConformanceFailure("saving an account of group '\(other.account.group)' into '\(store.group)' succeeded")
      } catch is TokenKitError {}
      try expect(try store.list(.all).isEmpty, "store.list(.all).isEmpty")
    },
    Check(name: "a token for other scopes loads back without the grant, leaving the account as it was") { factory in
      let store = try factory(freshGroup())
      let saved = sampleAccount(group: store.group)
      try store.save(saved.account, tokens: saved.tokens)
      defer { _ = try? store.remove(saved.account.key) }
      let listed = try store.list(.all)
      try expectEqual(try store.loadToken(for: saved.account.key, scopes: mail), nil)

      // Given with a refresh token and an ID token, which a store must not keep there.
      try store.saveToken(scopedTokens("mail"), scopes: mail, of: saved.account)
      try expectEqual(try store.loadToken(for: saved.account.key, scopes: mail), scopedTokens("mail").withoutGrant)
      try expectEqual(try store.load(saved.account.key), saved)
      try expectEqual(try store.list(.all), listed)
      try expectEqual(try store.loadAll(.all), [saved])
      // The same scopes in another order are the same set, and find the same token.
      try expectEqual(
        try store.loadToken(for: saved.account.key, scopes: ScopeSet(["offline_access", "Mail.Send", "IMAP"])!),
        scopedTokens("mail").withoutGrant)

      let replacement = TokenSet(
        accessToken: "mail-2", expiresAt: epoch.addingTimeInterval(7200), scope: ["IMAP"], issuedAt: epoch)
      try store.saveToken(replacement, scopes: mail, of: saved.account)
      try expectEqual(try store.loadToken(for: saved.account.key, scopes: mail), replacement)
      try expectEqual(try store.list(.all), listed)
    },
    Check(name: "tokens for other scopes are kept per scope set, account and group") { factory in
      let work = try factory(freshGroup())
      let home = try factory(freshGroup())
      let ada = sampleAccount(group: work.group)
      let grace = sampleAccount(group: work.group, type: "graph", id: "grace-oid", name: "grace@contoso.com")
      try save([ada, grace], in: work)
      defer { removeQuietly([ada, grace], from: work) }
      let files = ScopeSet(["Files.Read"])!
      try work.saveToken(scopedTokens("ada-mail"), scopes: mail, of: ada.account)
      try work.saveToken(scopedTokens("ada-files"), scopes: files, of: ada.account)
      try work.saveToken(scopedTokens("grace-mail"), scopes: mail, of: grace.account)

      try expectEqual(try work.loadToken(for: ada.account.key, scopes: mail)?.accessToken, "access-ada-mail")
      try expectEqual(try work.loadToken(for: ada.account.key, scopes: files)?.accessToken, "access-ada-files")
      try expectEqual(try work.loadToken(for: grace.account.key, scopes: mail)?.accessToken, "access-grace-mail")
      try expectEqual(try work.loadToken(for: grace.account.key, scopes: files), nil)
      // A subset or superset of a kept set is another set.
      try expectEqual(try work.loadToken(for: ada.account.key, scopes: ScopeSet(["IMAP"])!), nil)
      try expectEqual(try home.loadToken(for: ada.account.key, scopes: mail), nil)
      try expectEqual(try work.list(.all).count, 2)
    },
    Check(name: "remove removes the account's tokens for other scopes, and no other account's") { factory in
      let store = try factory(freshGroup())
      let ada = sampleAccount(group: store.group)
      let grace = sampleAccount(group: store.group, type: "graph", id: "grace-oid", name: "grace@contoso.com")
      try save([ada, grace], in: store)
      defer { removeQuietly([ada, grace], from: store) }
      try store.saveToken(scopedTokens("ada-mail"), scopes: mail, of: ada.account)
      try store.saveToken(scopedTokens("grace-mail"), scopes: mail, of: grace.account)

      try expect(try store.remove(ada.account.key), "store.remove(ada.account.key)")
      try expectEqual(try store.loadToken(for: ada.account.key, scopes: mail), nil)
      try expectEqual(try store.loadToken(for: grace.account.key, scopes: mail)?.accessToken, "access-grace-mail")
      try expectEqual(try store.list(.all).map(\.account), [grace.account])
      // Signing in again as the same identity finds none of the old ones.
      try store.save(ada.account, tokens: ada.tokens)
      try expectEqual(try store.loadToken(for: ada.account.key, scopes: mail), nil)
    },
    Check(name: "a token for other scopes of an account of another group is refused") { factory in
      let store = try factory(freshGroup())
      let other = sampleAccount(group: freshGroup())
      do {
        try store.saveToken(scopedTokens("mail"), scopes: mail, of: other.account)
        throw ConformanceFailure("saving a token of group '\(other.account.group)' into '\(store.group)' succeeded")
      } catch is TokenKitError {}
      try expectEqual(try store.loadToken(for: other.account.key, scopes: mail), nil)
    },
  ]

  // MARK: - Checking

  static func expect(
    _ condition: Bool, _ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
  ) throws {
    guard condition else { throw ConformanceFailure("\(file):\(line): expected \(what())") }
  }

  static func expectEqual<T: Equatable>(
    _ actual: T, _ expected: T, file: StaticString = #fileID, line: UInt = #line
  ) throws {
    guard actual == expected else {
      throw ConformanceFailure("\(file):\(line): got \(actual), expected \(expected)")
    }
  }

  // MARK: - Fixtures

  static func save(_ entries: [StoredAccount], in store: any TokenStore) throws {
    for entry in entries { try store.save(entry.account, tokens: entry.tokens) }
  }

  /// Cleans up after a check; a failure here must not hide the check's own result.
  static func removeQuietly(_ entries: [StoredAccount], from store: any TokenStore) {
    for entry in entries { _ = try? store.remove(entry.account.key) }
  }

  /// A group name no other run uses.
  public static func freshGroup() -> String { "conformance-\(UInt64.random(in: 0...UInt64.max))" }

  /// Dates are whole seconds: stores may keep no finer precision.
  static let epoch = Date(timeIntervalSince1970: 1_790_000_000)

  static func sampleAccount(
    group: String, type: String = "graph", id: String = "ada-oid", name: String = "ada@contoso.com"
  ) -> StoredAccount {
    StoredAccount(
      account: Account(
        type: type, id: id, name: name, group: group, scopes: ["openid", "User.Read"],
        createdAt: epoch, updatedAt: epoch, issuer: "https://login.example.org/\(type)",
        clientID: "client-\(type)", authority: "login.example.org"),
      tokens: TokenSet(
        accessToken: "access-\(id)", refreshToken: "refresh-\(id)", idToken: "id-\(id)",
        expiresAt: epoch.addingTimeInterval(3600), scope: ["openid", "User.Read"],
        issuedAt: epoch))
  }

  /// Scopes of another resource than the sample account's, as Outlook's IMAP is to Graph.
  static let mail = ScopeSet(["IMAP", "Mail.Send", "offline_access"])!

  /// A token for other scopes, as a token response gives it: with a refresh token and an
  /// ID token, which a store must drop.
  static func scopedTokens(_ name: String) -> TokenSet {
    TokenSet(
      accessToken: "access-\(name)", refreshToken: "refresh-\(name)", idToken: "id-\(name)",
      expiresAt: epoch.addingTimeInterval(1800), scope: ["IMAP", "Mail.Send"], tokenType: "Bearer", issuedAt: epoch)
  }

  static func tokens(generation: Int) -> TokenSet {
    TokenSet(
      accessToken: "access-\(generation)", refreshToken: "refresh-\(generation)",
      expiresAt: epoch.addingTimeInterval(Double(generation)))
  }
}
