import Crypto

/// The one way a file is named after something that must not show in its name: the first
/// 16 bytes of the SHA-256 of its parts, in hexadecimal.
///
/// A name in a folder others may list would tell who signs in where (an account's lock
/// and journal entry), and an issuer URL or an account id may hold characters no file name
/// can. 128 bits make a collision as unlikely as guessing a random key. Parts are joined
/// with NUL, which none can hold, so that ("ab", "c") and ("a", "bc") name two files.
public enum HashedName {
  public static func of(_ parts: String...) -> String {
    // In bytes: `joined` and `String(_:radix:)` instantiated generic code a direct
    // `tokenctl token`, which names its account's lock file with this, ran for nothing else.
    var bytes: [UInt8] = []
    for (index, part) in parts.enumerated() {
      if index > 0 { bytes.append(0) }
      bytes += part.utf8
    }
    let digits = Array("0123456789abcdef".utf8)
    var hex: [UInt8] = []
    hex.reserveCapacity(32)
    for byte in SHA256.hash(data: bytes).prefix(16) {
      hex.append(digits[Int(byte >> 4)])
      hex.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: hex, as: UTF8.self)
  }
}
