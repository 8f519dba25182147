/// A set of scopes in one normal form: sorted, each once (`scope`, RFC 6749 §3.3).
///
/// §3.3 makes the order of a scope list meaningless, so `read write` and `write read` ask
/// for the same token: keeping tokens by a normal form lets either find it. Every member
/// is a `scope-token` (printable ASCII without space, `"` or `\`), and the set is never
/// empty, since an empty `scope` on a refresh means "the grant's own scope" (§6).
public struct ScopeSet: Sendable, Hashable, CustomStringConvertible {
  /// The scopes, sorted by their bytes.
  public let scopes: [String]

  /// The set of `scopes`; nil when there is none or one is not a scope token.
  public init?(_ scopes: some Sequence<String>) {
    let unique = Set(scopes)
    guard !unique.isEmpty, unique.allSatisfy(OAuthSyntax.isScopeToken) else { return nil }
    // By bytes, not by Unicode collation: the form must not depend on a locale.
    self.scopes = unique.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
  }

  /// The set a `scope` value names: scope tokens separated by spaces (runs of them, and
  /// spaces at either end, are forgiven). Nil as `init(_:)` is.
  public init?(parsing text: String) {
    self.init(text.split(separator: " ", omittingEmptySubsequences: true).map(String.init))
  }

  /// The `scope` value: the scopes separated by single spaces.
  public var text: String { scopes.joined(separator: " ") }

  public var description: String { text }

  /// The set as a sentence names it: `scope 'read'`, `scopes 'read write'`.
  public var phrase: String { scopes.count == 1 ? "scope '\(text)'" : "scopes '\(text)'" }

  /// Whether `self` is exactly the scopes of `account`, whose own token therefore serves.
  public func isOwn(of account: Account) -> Bool { ScopeSet(account.scopes) == self }
}
