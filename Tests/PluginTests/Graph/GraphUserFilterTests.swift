import MicrosoftGraphAccount
import Testing

/// The search view's `$filter`: a prefix can hold any text, and none of it may end the
/// OData literal or the query parameter.
@Suite struct GraphUserFilterTests {
  struct Case: Sendable, CustomStringConvertible {
    var field: GraphUserFilter.Field
    var prefix: String
    var expression: String
    var query: String
    var description: String { prefix }
  }

  static let cases: [Case] = [
    Case(
      field: .givenName, prefix: "Ada", expression: "startswith(givenName,'Ada')",
      query: "$filter=startswith%28givenName%2C%27Ada%27%29&$top=10"),
    Case(
      field: .surname, prefix: "O'Brien", expression: "startswith(surname,'O''Brien')",
      query: "$filter=startswith%28surname%2C%27O%27%27Brien%27%29&$top=10"),
    Case(
      field: .displayName, prefix: "Tom & Jerry", expression: "startswith(displayName,'Tom & Jerry')",
      query: "$filter=startswith%28displayName%2C%27Tom%20%26%20Jerry%27%29&$top=10"),
    Case(
      field: .givenName, prefix: "Zoë", expression: "startswith(givenName,'Zoë')",
      query: "$filter=startswith%28givenName%2C%27Zo%C3%AB%27%29&$top=10"),
    Case(
      field: .mail, prefix: "a+b#c", expression: "startswith(mail,'a+b#c')",
      query: "$filter=startswith%28mail%2C%27a%2Bb%23c%27%29&$top=10"),
    Case(
      field: .userPrincipalName, prefix: "x') or true or ('",
      expression: "startswith(userPrincipalName,'x'') or true or (''')",
      query: "$filter=startswith%28userPrincipalName%2C%27x%27%27%29%20or%20true%20or%20%28%27%27%27%29&$top=10"),
  ]

  @Test(arguments: cases)
  func buildsAnEscapedFilter(_ example: Case) {
    let filter = GraphUserFilter(field: example.field, prefix: example.prefix)
    #expect(filter.expression == example.expression)
    #expect(filter.query(top: 10) == example.query)
  }

  @Test func literalsDoubleEveryQuote() {
    #expect(GraphUserFilter.literal("''") == "''''''")
    #expect(GraphUserFilter.literal("") == "''")
  }

  @Test func fieldsAreGraphPropertyNames() {
    #expect(
      GraphUserFilter.Field.allCases.map(\.rawValue) == [
        "givenName", "displayName", "surname", "mail", "userPrincipalName",
      ])
  }
}
