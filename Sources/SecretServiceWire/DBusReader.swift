/// Reads values out of a D-Bus message by their signature, little endian, every read
/// checked against the message's end: a malformed or truncated message is an error, never
/// a crash. Offsets count from the start of the message, where alignment counts from.
public struct DBusReader {
  public enum Failure: Error, Equatable, Sendable {
    /// The message ends before the value does, or says a length that does not fit.
    case truncated
    /// A signature this reader does not know, or one nested deeper than D-Bus allows.
    case badSignature
    /// A string that is not UTF-8 or not NUL-terminated.
    case badString
  }

  let bytes: [UInt8]
  var offset: Int

  init(_ bytes: [UInt8], offset: Int = 0) {
    self.bytes = bytes
    self.offset = offset
  }

  /// The values of `signature`, a sequence of complete types, in order.
  mutating func values(_ signature: String) throws(Failure) -> [DBusValue] {
    let types = Array(signature.utf8)
    var index = 0
    var values: [DBusValue] = []
    while index < types.count {
      let end = try Self.endOfCompleteType(types, at: index)
      values.append(try value(types, at: index, depth: 0))
      index = end
    }
    return values
  }

  /// D-Bus allows 32 levels of arrays and 32 of structures; variants nest no deeper here.
  private static let deepest = 64

  /// The value of the complete type at `index` of `types`, which is known to be one.
  private mutating func value(_ types: [UInt8], at index: Int, depth: Int) throws(Failure) -> DBusValue {
    guard depth <= Self.deepest else { throw .badSignature }
    switch types[index] {
    case UInt8(ascii: "y"): return .integer(UInt64(try fixed(1)))
    case UInt8(ascii: "n"), UInt8(ascii: "q"): return .integer(try fixed(2))
    case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "h"): return .integer(try fixed(4))
    case UInt8(ascii: "x"), UInt8(ascii: "t"): return .integer(try fixed(8))
    case UInt8(ascii: "d"): return .double(Double(bitPattern: try fixed(8)))
    case UInt8(ascii: "s"), UInt8(ascii: "o"): return .string(try text(length: Int(try fixed(4))))
    case UInt8(ascii: "g"): return .string(try text(length: Int(try fixed(1))))
    case UInt8(ascii: "v"):
      let signature = Array(try text(length: Int(try fixed(1))).utf8)
      guard !signature.isEmpty, try Self.endOfCompleteType(signature, at: 0) == signature.count else {
        throw .badSignature
      }
      return .variant(try value(signature, at: 0, depth: depth + 1))
    case UInt8(ascii: "a"):
      let length = Int(try fixed(4))
      let element = index + 1
      try align(Self.alignment(of: types[element]))
      guard length <= bytes.count - offset else { throw .truncated }
      let end = offset + length
      if types[element] == UInt8(ascii: "y") {
        defer { offset = end }
        return .bytes(Array(bytes[offset..<end]))
      }
      var elements: [DBusValue] = []
      while offset < end { elements.append(try value(types, at: element, depth: depth + 1)) }
      guard offset == end else { throw .truncated }
      return .array(elements)
    case UInt8(ascii: "("), UInt8(ascii: "{"):
      try align(8)
      var fields: [DBusValue] = []
      var field = index + 1
      while types[field] != UInt8(ascii: ")"), types[field] != UInt8(ascii: "}") {
        fields.append(try value(types, at: field, depth: depth + 1))
        field = try Self.endOfCompleteType(types, at: field)
      }
      return .structure(fields)
    default:
      throw .badSignature
    }
  }

  /// An unsigned little-endian integer of `size` bytes, aligned to its size.
  private mutating func fixed(_ size: Int) throws(Failure) -> UInt64 {
    try align(size)
    guard size <= bytes.count - offset else { throw .truncated }
    var value: UInt64 = 0
    for index in (0..<size).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
    offset += size
    return value
  }

  /// `length` bytes of UTF-8 and the NUL after them.
  private mutating func text(length: Int) throws(Failure) -> String {
    guard length < bytes.count - offset, bytes[offset + length] == 0 else { throw .truncated }
    guard let text = String(validating: bytes[offset..<offset + length], as: UTF8.self) else { throw .badString }
    offset += length + 1
    return text
  }

  private mutating func align(_ boundary: Int) throws(Failure) {
    let padded = (offset + boundary - 1) / boundary * boundary
    guard padded <= bytes.count else { throw .truncated }
    offset = padded
  }

  /// The alignment of values of the type whose code is `code`.
  static func alignment(of code: UInt8) -> Int {
    switch code {
    case UInt8(ascii: "n"), UInt8(ascii: "q"): return 2
    case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "h"), UInt8(ascii: "s"),
      UInt8(ascii: "o"), UInt8(ascii: "a"):
      return 4
    case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): return 8
    default: return 1
    }
  }

  /// The index just past the complete type that starts at `index` of `types`.
  static func endOfCompleteType(_ types: [UInt8], at index: Int, depth: Int = 0) throws(Failure) -> Int {
    guard depth <= deepest, index < types.count else { throw .badSignature }
    switch types[index] {
    case UInt8(ascii: "a"):
      return try endOfCompleteType(types, at: index + 1, depth: depth + 1)
    case UInt8(ascii: "("), UInt8(ascii: "{"):
      let close = types[index] == UInt8(ascii: "(") ? UInt8(ascii: ")") : UInt8(ascii: "}")
      var next = index + 1
      var count = 0
      while next < types.count, types[next] != close {
        next = try endOfCompleteType(types, at: next, depth: depth + 1)
        count += 1
      }
      guard next < types.count, count > 0, close == UInt8(ascii: ")") || count == 2 else { throw .badSignature }
      return next + 1
    case UInt8(ascii: "y"), UInt8(ascii: "b"), UInt8(ascii: "n"), UInt8(ascii: "q"), UInt8(ascii: "i"),
      UInt8(ascii: "u"), UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "h"),
      UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"), UInt8(ascii: "v"):
      return index + 1
    default:
      throw .badSignature
    }
  }
}
