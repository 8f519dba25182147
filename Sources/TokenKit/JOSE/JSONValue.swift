#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A JSON value (RFC 8259), for JOSE headers, JWT claims (RFC 7519 §4) and JWK members
/// (RFC 7517 §4), whose sets of members are open-ended.
///
/// Numbers are `Double`: the numeric dates of RFC 7519 §2 ("NumericDate") may carry a
/// fraction, and every second until the year 285 million fits in a double exactly.
public enum JSONValue: Sendable, Hashable {
  case null
  case bool(Bool)
  case number(Double)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  /// The string, if this is one.
  public var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  /// The number, if this is one.
  public var numberValue: Double? {
    if case .number(let value) = self { return value }
    return nil
  }

  /// The members, if this is an object.
  public var objectValue: [String: JSONValue]? {
    if case .object(let value) = self { return value }
    return nil
  }

  /// The elements, if this is an array.
  public var arrayValue: [JSONValue]? {
    if case .array(let value) = self { return value }
    return nil
  }

  /// Parses `bytes` as a JSON object, or returns `nil` if they are not one.
  ///
  /// JOSE headers, JWT claims sets and JWK Sets must all be objects (RFC 7515 §4,
  /// RFC 7519 §7.2 step 10, RFC 7517 §5).
  public static func parseObject(_ bytes: some Collection<UInt8>) -> [String: JSONValue]? {
    guard case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else {
      return nil
    }
    return members
  }
}

extension JSONValue: Codable {
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Double.self) {
      self = .number(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([JSONValue].self) {
      self = .array(value)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .number(let value): try container.encode(value)
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }
}

// Literals, so that claims and JWKs can be written as Swift dictionaries. Not `nil`: in a
// `JSONValue?` it would be ambiguous between JSON null and no value.
extension JSONValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
  ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  public init(integerLiteral value: Int) { self = .number(Double(value)) }
  public init(floatLiteral value: Double) { self = .number(value) }
  public init(stringLiteral value: String) { self = .string(value) }
  public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self = .object(Dictionary(elements) { $1 })
  }
}
