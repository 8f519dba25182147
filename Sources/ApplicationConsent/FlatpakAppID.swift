/// A Flatpak application id, such as `org.example.App`: the name an app is installed,
/// run and sandboxed under, which its sandbox's `/.flatpak-info` carries.
///
/// The syntax is flatpak's own (`flatpak_is_valid_name`, flatpak-utils.c): three or more
/// elements separated by `.`, each non-empty, of ASCII letters, digits and `_`, not
/// starting with a digit; `-` only in the last element; 255 bytes at most. So every app
/// id is also a valid D-Bus name, and none holds a space, a `/` or a `:`.
public struct FlatpakAppID: Sendable, Hashable, CustomStringConvertible {
  /// The id as flatpak writes it.
  public let rawValue: String

  /// flatpak's limit, the same as D-Bus's for a name.
  static let maximumLength = 255

  /// The id `text`, or nil when flatpak would not accept it as one.
  public init?(_ text: String) {
    let bytes = Array(text.utf8)
    guard !bytes.isEmpty, bytes.count <= Self.maximumLength else { return nil }
    let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard elements.count >= 3 else { return nil }
    for (index, element) in elements.enumerated() {
      let last = index == elements.count - 1
      guard let first = element.first, !Self.isDigit(first) else { return nil }
      guard element.allSatisfy({ Self.isNameByte($0, dashAllowed: last) }) else { return nil }
    }
    rawValue = text
  }

  public var description: String { rawValue }

  private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

  private static func isNameByte(_ byte: UInt8, dashAllowed: Bool) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "_"): true
    case UInt8(ascii: "0")...UInt8(ascii: "9"): true
    case UInt8(ascii: "-"): dashAllowed
    default: false
    }
  }
}
