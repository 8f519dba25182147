/// The base64url encoding of RFC 4648 §5, as JOSE uses it (RFC 7515 §2, "Base64url
/// Encoding"): `-` and `_` for `+` and `/`, and no `=` padding.
///
/// Written out rather than built on `Data(base64Encoded:)` because that accepts only the
/// standard alphabet, and translating the alphabet first would let a `+` or `/` in a token
/// slip through as valid base64url.
public enum Base64URL {
  private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

  /// The 6-bit value of each ASCII byte, or 0xFF for a byte outside the alphabet.
  private static let values: [UInt8] = {
    var table = [UInt8](repeating: 0xFF, count: 256)
    for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
    return table
  }()

  /// Encodes `bytes` without padding (RFC 7515 §2).
  public static func encode(_ bytes: some Sequence<UInt8>) -> String {
    var output: [UInt8] = []
    var buffer: UInt32 = 0
    var bits = 0
    for byte in bytes {
      buffer = (buffer << 8) | UInt32(byte)
      bits += 8
      while bits >= 6 {
        bits -= 6
        output.append(alphabet[Int((buffer >> UInt32(bits)) & 0x3F)])
      }
    }
    if bits > 0 {
      output.append(alphabet[Int((buffer << UInt32(6 - bits)) & 0x3F)])
    }
    return String(decoding: output, as: UTF8.self)
  }

  /// Decodes base64url text, or returns `nil` if it is not valid.
  ///
  /// Trailing `=` padding is allowed but not required. Anything outside the alphabet
  /// (including `+`, `/`, whitespace), a length that leaves a lone sixth-bit group, and
  /// non-zero leftover bits are refused: RFC 4648 §3.5 lets a decoder reject them, and a
  /// token has exactly one valid spelling.
  public static func decode(_ string: some StringProtocol) -> [UInt8]? {
    var text = Array(string.utf8)
    var padding = 0
    while text.last == UInt8(ascii: "=") {
      text.removeLast()
      padding += 1
    }
    guard padding == 0 || (text.count + padding) % 4 == 0, text.count % 4 != 1 else { return nil }

    var output: [UInt8] = []
    output.reserveCapacity(text.count * 3 / 4)
    var buffer: UInt32 = 0
    var bits = 0
    for character in text {
      let value = values[Int(character)]
      guard value != 0xFF else { return nil }
      buffer = (buffer << 6) | UInt32(value)
      bits += 6
      if bits >= 8 {
        bits -= 8
        output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
      }
    }
    // The bits left over after the last whole byte must be zero padding.
    guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
    return output
  }
}
