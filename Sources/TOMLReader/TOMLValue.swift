/// A value in the TOML subset tokenctl reads: strings, integers, booleans, arrays and
/// tables.
///
/// Floats and the four date and time types of TOML 1.0 are missing on purpose: nothing in
/// tokenctl's configuration is one, and a parser that refuses them is smaller to fuzz.
/// ``TOMLParser`` rejects them with an error saying they are not supported.
public enum TOMLValue: Sendable, Hashable {
  /// A string, from any of the four string forms, escapes resolved.
  case string(String)
  /// A 64-bit signed integer, as TOML 1.0 requires.
  case integer(Int64)
  /// `true` or `false`.
  case boolean(Bool)
  /// An array; TOML 1.0 allows its elements to differ in type.
  case array([TOMLValue])
  /// A table, from a `[header]`, dotted keys, or an inline `{ … }`.
  case table(TOMLTable)

  /// The string, if this is one.
  public var string: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  /// The integer, if this is one.
  public var integer: Int64? {
    if case .integer(let value) = self { return value }
    return nil
  }

  /// The boolean, if this is one.
  public var boolean: Bool? {
    if case .boolean(let value) = self { return value }
    return nil
  }

  /// The elements, if this is an array.
  public var array: [TOMLValue]? {
    if case .array(let value) = self { return value }
    return nil
  }

  /// The table, if this is one.
  public var table: TOMLTable? {
    if case .table(let value) = self { return value }
    return nil
  }

  /// What kind of value this is, with an article, for messages: "expected a string, found
  /// an integer".
  public var kind: String {
    switch self {
    case .string: return "a string"
    case .integer: return "an integer"
    case .boolean: return "a boolean"
    case .array: return "an array"
    case .table: return "a table"
    }
  }
}

extension TOMLValue: CustomStringConvertible {
  /// The value in TOML syntax, tables inline, with the values of keys that look secret
  /// replaced by `<redacted>` (see ``TOMLTable/isSensitive(_:)``).
  public var description: String {
    switch self {
    case .string(let value): return Self.quoted(value)
    case .integer(let value): return String(value)
    case .boolean(let value): return String(value)
    case .array(let elements): return "[" + elements.map(\.description).joined(separator: ", ") + "]"
    case .table(let table): return table.description
    }
  }

  /// `value` as a TOML basic string, escaping what must be escaped.
  public static func quoted(_ value: String) -> String {
    var result = "\""
    for scalar in value.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\t": result += "\\t"
      case "\r": result += "\\r"
      // C0 and C1 controls and the bidirectional overrides: a key shown in an error must
      // not be able to move the cursor, recolour the terminal or reorder the text.
      case _
      where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
        || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value):
        let hex = String(scalar.value, radix: 16, uppercase: true)
        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result + "\""
  }
}

extension TOMLValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
  ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
  public init(stringLiteral value: String) { self = .string(value) }
  public init(integerLiteral value: Int64) { self = .integer(value) }
  public init(booleanLiteral value: Bool) { self = .boolean(value) }
  public init(arrayLiteral elements: TOMLValue...) { self = .array(elements) }
  public init(dictionaryLiteral elements: (String, TOMLValue)...) {
    var table = TOMLTable()
    for (key, value) in elements { table[key] = value }
    self = .table(table)
  }
}
