/// A prefix search over users, as the walkthrough's search view made it:
/// `$filter=startswith(givenName,'Ada')`.
public struct GraphUserFilter: Sendable, Hashable {
  /// The user properties Graph can filter with `startswith` without advanced queries.
  public enum Field: String, Sendable, Hashable, CaseIterable {
    case givenName, displayName, surname, mail, userPrincipalName
  }

  public var field: Field
  public var prefix: String

  public init(field: Field = .givenName, prefix: String) {
    self.field = field
    self.prefix = prefix
  }

  /// `text` as an OData string literal (OData ABNF `string`): quoted, with each `'`
  /// doubled, so `O'Brien` cannot end the literal and inject a clause.
  public static func literal(_ text: String) -> String {
    "'" + text.replacing("'", with: "''") + "'"
  }

  /// The `$filter` expression, unencoded.
  public var expression: String { "startswith(\(field.rawValue),\(Self.literal(prefix)))" }

  /// The query string asking for the first `top` matches, percent-encoded.
  public func query(top: Int) -> String {
    GraphQuery.string([("$filter", expression), ("$top", String(top))])
  }
}
