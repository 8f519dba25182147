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
    let digest = SHA256.hash(data: Array(parts.joined(separator: "\u{0}").utf8))
    return digest.prefix(16).map { byte in
      let hex = String(byte, radix: 16)
      return hex.count == 1 ? "0" + hex : hex
    }.joined()
  }
}
