/// `application/x-www-form-urlencoded` (the URL Standard's serializer), used for token,
/// device and revocation requests (RFC 6749 Appendix B) and for query strings.
public enum FormEncoding {
  public static func encode(_ fields: [(String, String)]) -> String {
    fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
  }

  /// Decodes `a=b&c=d`; `+` is a space. Malformed escapes are kept literally, as the URL
  /// Standard's parser does.
  public static func decode(_ string: some StringProtocol) -> [(String, String)] {
    string.split(separator: "&", omittingEmptySubsequences: true).map { pair in
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let value = parts.count > 1 ? unescape(parts[1]) : ""
      return (unescape(parts[0]), value)
    }
  }

  static func escape(_ string: String) -> String {
    var out = ""
    for byte in string.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
        UInt8(ascii: "_"), UInt8(ascii: "*"):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      case UInt8(ascii: " "):
        out += "+"
      default:
        out += "%" + hex(byte >> 4) + hex(byte & 0xF)
      }
    }
    return out
  }

  static func unescape(_ string: some StringProtocol) -> String {
    var bytes: [UInt8] = []
    var utf8 = Array(string.utf8)[...]
    while let byte = utf8.popFirst() {
      if byte == UInt8(ascii: "+") {
        bytes.append(UInt8(ascii: " "))
      } else if byte == UInt8(ascii: "%"), utf8.count >= 2,
        let high = nibble(utf8[utf8.startIndex]), let low = nibble(utf8[utf8.startIndex + 1])
      {
        bytes.append(high << 4 | low)
        utf8 = utf8.dropFirst(2)
      } else {
        bytes.append(byte)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  private static func hex(_ nibble: UInt8) -> String {
    String(UnicodeScalar(nibble < 10 ? nibble + 48 : nibble + 55))
  }

  private static func nibble(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - 48
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - 87
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - 55
    default: return nil
    }
  }
}
