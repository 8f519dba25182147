/// How a user names an account on the command line: `type:account`, or just `account`
/// when that is unique. `account` is the display name or the stable id.
public struct AccountReference: Sendable, Hashable, CustomStringConvertible {
  public var type: String?
  public var account: String

  public init(type: String?, account: String) {
    self.type = type
    self.account = account
  }

  /// Parses `text`, reading what stands before the first `:` as a type only when it is
  /// one of `knownTypes`, so that a name that itself holds a colon still works.
  public init(parsing text: String, knownTypes: Set<String>) {
    if let colon = text.firstIndex(of: ":"), knownTypes.contains(String(text[..<colon])) {
      self.init(type: String(text[..<colon]), account: String(text[text.index(after: colon)...]))
    } else {
      self.init(type: nil, account: text)
    }
  }

  public var description: String { type.map { "\($0):\(account)" } ?? account }

  /// Finds the one account this reference names in `store`, without its tokens.
  ///
  /// The display name is tried first, then the stable id. Throws `noSuchAccount` or
  /// `ambiguousAccount`, whose message lists the candidates. `suggesting`: a name that
  /// matches none is answered with the one it was likely meant as, which costs a listing
  /// of the group; a caller that shows no message (git's helper) passes false.
  public func resolve(in store: some TokenStore, suggesting: Bool = true) throws -> AccountListing {
    try resolve(store, suggesting: suggesting) { try store.list($0).map { ($0.account, $0) } }.value
  }

  /// Finds the one account this reference names in `store` and loads its tokens, in as
  /// few round trips as the store allows (this is `tokenctl token`'s path).
  public func load(from store: some TokenStore) throws -> StoredAccount {
    try resolve(store, suggesting: true) { try store.loadAll($0).map { ($0.account, $0) } }.value
  }

  private func resolve<Value>(
    _ store: some TokenStore, suggesting: Bool, using find: (AccountQuery) throws -> [(account: Account, value: Value)]
  ) throws -> (account: Account, value: Value) {
    for query in [AccountQuery(type: type, name: account), AccountQuery(type: type, id: account)] {
      let found = try find(query)
      if found.count == 1 { return found[0] }
      if found.count > 1 {
        let names = found.map { "  \($0.account.type):\($0.account.id)  (\($0.account.name))" }
        throw TokenKitError(
          .ambiguousAccount,
          "'\(self)' matches \(found.count) accounts in group '\(store.group)':\n"
            + names.sorted().joined(separator: "\n"),
          remedy: .nameOneAccount(candidates: found.map { "\($0.account.type):\($0.account.id)" }.sorted())
        )
      }
    }
    var guess = ""
    if suggesting, let accounts = try? store.list(AccountQuery(type: type)).map(\.account),
      let meant = likelyMeant(among: accounts)
    {
      guess = "; did you mean '\(meant)'?"
    }
    throw TokenKitError(
      .noSuchAccount, "no account '\(self)' in group '\(store.group)'\(guess)",
      remedy: .listAccounts(group: store.group))
  }

  /// The account this reference, which names none, was likely meant as, as `TYPE:NAME`
  /// (`TYPE:ID` where the name is shared): one whose display name is a slip or two away,
  /// or is an address whose part before the `@` is (`ada` for `ada@example.org`).
  func likelyMeant(among accounts: [Account]) -> String? {
    let candidates = accounts.filter { type == nil || $0.type == type }
    guard
      let meant = EditDistance.closest(
        to: account, among: candidates,
        forms: { [$0.name, String($0.name.prefix { $0 != "@" })] })
    else { return nil }
    let shared = accounts.count { $0.type == meant.type && $0.name == meant.name } > 1
    return "\(meant.type):\(shared ? meant.id : meant.name)"
  }
}
