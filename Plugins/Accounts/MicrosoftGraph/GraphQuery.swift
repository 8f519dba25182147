/// Percent-encoding for Graph URLs (RFC 3986 §2.1), kept apart from form encoding:
/// OData reads `+` in a query literally on some paths, so a space must be `%20`.
enum GraphQuery {
  /// A query string from `items` in order; names such as `$filter` are ours and kept as
  /// they are, values are encoded.
  static func string(_ items: [(name: String, value: String)]) -> String {
    items.map { "\($0.name)=\(escape($0.value))" }.joined(separator: "&")
  }

  /// `text` with every byte outside RFC 3986's unreserved set percent-encoded: safe as a
  /// query value and as a path segment (a guest's UPN holds `#`).
  static func escape(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "~"):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        let digits = Array("0123456789ABCDEF")
        out += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xF)])
      }
    }
    return out
  }
}
