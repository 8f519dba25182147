import TokenKit

/// The ways to name each account on the command line that a shell offers when completing
/// an ACCOUNT: `TYPE:NAME` (or `TYPE:ID` when the display name is shared within its type),
/// and the bare `NAME` when it is unique in the group. Only plain words are offered
/// (``CompletionWord/isPlain(_:)``): an account whose display name is not plain is offered
/// as `TYPE:ID`.
///
/// A word is offered only when ``AccountReference`` would take it back to the same account:
/// parsed against the known types (a bare name whose text before a colon is a type id
/// would be read as `TYPE:NAME`), then resolved as `resolve(in:)` does, display name first,
/// then id. `CompletionTests` checks each word against `resolve(in:)` itself.
///
/// Works on listings only: completing never needs, or reads, a token.
struct AccountCandidates {
  var accounts: [Account]
  var knownTypes: Set<String>

  /// The words, sorted, each one naming exactly one account.
  var words: [String] {
    var words = Set<String>()
    for account in accounts {
      let qualified = ["\(account.type):\(account.name)", "\(account.type):\(account.id)"]
      if let first = qualified.first(where: { offerable($0, for: account) }) { words.insert(first) }
      if offerable(account.name, for: account) { words.insert(account.name) }
    }
    return words.sorted()
  }

  private func offerable(_ word: String, for account: Account) -> Bool {
    CompletionWord.isPlain(word) && resolves(word, to: account)
  }

  /// Whether `word`, as the command line reads it, names `account` and no other.
  private func resolves(_ word: String, to account: Account) -> Bool {
    let reference = AccountReference(parsing: word, knownTypes: knownTypes)
    for query in [
      AccountQuery(type: reference.type, name: reference.account), .init(type: reference.type, id: reference.account),
    ] {
      let found = accounts.filter(query.matches)
      if found.count == 1 { return found[0].key == account.key }
      if found.count > 1 { return false }
    }
    return false
  }
}
