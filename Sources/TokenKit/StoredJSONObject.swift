/// The members of one JSON object (RFC 8259) as a stored token set needs them
/// (tokenctl-keyring(5)): each value a string, a number, null, or something else that is
/// checked for its shape and skipped. `TokenSet(storageJSON:item:)` reads every keyring
/// item through it.
///
/// Why not JSONDecoder: a process's first decode instantiates its generic machinery, which
/// was a tenth of a direct `tokenctl token`'s CPU time (0.3 of 3 ms) to read
/// eight members. It reads as JSONDecoder (swift-foundation's `JSONScanner`) reads, so that
/// no item readable before is unreadable now, nor refused in other words: the document's
/// shape is checked first, and a string's or a number's content only where a member is
/// read; a byte order mark may come first, a comma before a closing bracket; the first of
/// two members of one name counts; nesting stops at 512 levels; an integer may be written
/// with a fraction or an exponent when its value is whole (`1.0`, `1e3`). Only a document
/// in UTF-16 or UTF-32, which JSONDecoder would convert and tokenctl never writes, is not
/// read. `StoredTokensReadTests` and the `stored-tokens` fuzz target compare the two.
struct StoredJSONObject {
  /// A member's value; a string's and a number's content read on demand.
  enum Value {
    /// A string's bytes between its quotes, escapes and all (read by ``text``).
    case string(ArraySlice<UInt8>)
    /// A number's bytes (read by ``integer``).
    case number(ArraySlice<UInt8>)
    case null
    /// `true`, `false`, an object or an array.
    case other

    /// The string, escapes undone; nil for another value, and for a control character, an
    /// unknown escape, a lone surrogate or bytes that are not UTF-8.
    var text: String? {
      guard case .string(let bytes) = self else { return nil }
      var text: [UInt8] = []
      var index = bytes.startIndex
      while index < bytes.endIndex {
        let byte = bytes[index]
        index += 1
        guard byte == UInt8(ascii: "\\") else {
          guard byte >= 0x20 else { return nil }
          text.append(byte)
          continue
        }
        // The shape was checked: a byte follows every backslash, four every `u`.
        let escaped = bytes[index]
        index += 1
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escaped)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
          guard let unit = Self.hexUnit(bytes, at: &index) else { return nil }
          var scalar = Unicode.Scalar(unit)
          if (0xD800..<0xDC00).contains(unit) {
            // A high surrogate, which a low one's escape must follow.
            guard bytes.endIndex - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { return nil }
            index += 2
            guard let low = Self.hexUnit(bytes, at: &index), (0xDC00..<0xE000).contains(low) else { return nil }
            scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
          }
          guard let scalar else { return nil }
          text += String(Character(scalar)).utf8
        default: return nil
        }
      }
      return String(validating: text, as: UTF8.self)
    }

    /// The number as a 64-bit integer, when it is one: written as an integer that fits,
    /// or with a fraction or an exponent (RFC 8259 §6) whose value is whole and fits.
    var integer: Int64? {
      guard case .number(let bytes) = self else { return nil }
      var index = bytes.startIndex
      func digits() -> Int {
        let start = index
        while index < bytes.endIndex, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
          index += 1
        }
        return index - start
      }
      if index < bytes.endIndex, bytes[index] == UInt8(ascii: "-") { index += 1 }
      let integerDigits = digits()
      guard integerDigits == 1 || (integerDigits > 1 && bytes[index - integerDigits] != UInt8(ascii: "0")) else {
        return nil
      }
      var whole = true
      if index < bytes.endIndex, bytes[index] == UInt8(ascii: ".") {
        index += 1
        guard digits() > 0 else { return nil }
        whole = false
      }
      if index < bytes.endIndex, bytes[index] | 0x20 == UInt8(ascii: "e") {
        index += 1
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard digits() > 0 else { return nil }
        whole = false
      }
      guard index == bytes.endIndex else { return nil }
      let text = String(decoding: bytes, as: UTF8.self)
      return whole ? Int64(text) : Double(text).flatMap { Int64(exactly: $0) }
    }

    /// Four hexadecimal digits at `index`, which moves past them.
    private static func hexUnit(_ bytes: ArraySlice<UInt8>, at index: inout Int) -> UInt32? {
      guard bytes.endIndex - index >= 4 else { return nil }
      var unit: UInt32 = 0
      for _ in 0..<4 {
        let byte = bytes[index]
        let digit: UInt8
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
        default: return nil
        }
        unit = unit << 4 | UInt32(digit)
        index += 1
      }
      return unit
    }
  }

  /// The members of the object `bytes` hold, the first of each name; nil when they hold
  /// something else, or no JSON at all.
  static func members(_ bytes: [UInt8]) -> [String: Value]? {
    var reader = StoredJSONObject(bytes: bytes)
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.offset = 3 }
    reader.skipSpace()
    guard reader.peek == UInt8(ascii: "{"), let members = reader.object(naming: true) else { return nil }
    reader.skipSpace()
    return reader.offset == bytes.count ? members : nil
  }

  /// How deep arrays and objects may nest, as JSONDecoder allows.
  private static let maximumDepth = 512

  private let bytes: [UInt8]
  private var offset = 0
  private var depth = 0

  private init(bytes: [UInt8]) { self.bytes = bytes }

  private var peek: UInt8? { offset < bytes.count ? bytes[offset] : nil }

  private mutating func skipSpace() {
    while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { offset += 1 }
  }

  private mutating func take(_ byte: UInt8) -> Bool {
    guard peek == byte else { return false }
    offset += 1
    return true
  }

  /// An object, from its `{`: its members when `naming` (the document's own object, whose
  /// names are read), else an empty dictionary once its shape is checked.
  private mutating func object(naming: Bool) -> [String: Value]? {
    guard depth < Self.maximumDepth, take(UInt8(ascii: "{")) else { return nil }
    depth += 1
    defer { depth -= 1 }
    var members: [String: Value] = [:]
    skipSpace()
    if take(UInt8(ascii: "}")) { return members }
    while true {
      guard let name = string() else { return nil }
      skipSpace()
      guard take(UInt8(ascii: ":")) else { return nil }
      guard let value = value() else { return nil }
      if naming {
        guard let name = Value.string(name).text else { return nil }
        if members[name] == nil { members[name] = value }
      }
      skipSpace()
      if take(UInt8(ascii: "}")) { return members }
      guard take(UInt8(ascii: ",")) else { return nil }
      skipSpace()
      if take(UInt8(ascii: "}")) { return members }
    }
  }

  /// An array, from its `[`, its shape checked.
  private mutating func array() -> Bool {
    guard depth < Self.maximumDepth, take(UInt8(ascii: "[")) else { return false }
    depth += 1
    defer { depth -= 1 }
    skipSpace()
    if take(UInt8(ascii: "]")) { return true }
    while true {
      guard value() != nil else { return false }
      skipSpace()
      if take(UInt8(ascii: "]")) { return true }
      guard take(UInt8(ascii: ",")) else { return false }
      skipSpace()
      if take(UInt8(ascii: "]")) { return true }
    }
  }

  /// Any value, after any white space.
  private mutating func value() -> Value? {
    skipSpace()
    switch peek {
    case UInt8(ascii: "\"")?: return string().map(Value.string)
    case UInt8(ascii: "{")?: return object(naming: false) == nil ? nil : .other
    case UInt8(ascii: "[")?: return array() ? .other : nil
    case UInt8(ascii: "t")?: return literal("true") ? .other : nil
    case UInt8(ascii: "f")?: return literal("false") ? .other : nil
    case UInt8(ascii: "n")?: return literal("null") ? .null : nil
    case UInt8(ascii: "-")?, (UInt8(ascii: "0")...UInt8(ascii: "9"))?:
      // Digits, signs, points and exponents: the rest is checked where the number is read.
      let start = offset
      offset += 1
      while let byte = peek,
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
          || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte | 0x20 == UInt8(ascii: "e")
      {
        offset += 1
      }
      return .number(bytes[start..<offset])
    default: return nil
    }
  }

  private mutating func literal(_ word: StaticString) -> Bool {
    let count = word.utf8CodeUnitCount
    guard bytes.count - offset >= count else { return false }
    for index in 0..<count where bytes[offset + index] != word.utf8Start[index] { return false }
    offset += count
    return true
  }

  /// A string's bytes between its quotes, from its `"`: the quote that ends it found, past
  /// each backslash and the byte after it, and the four after `\u` (none a quote).
  private mutating func string() -> ArraySlice<UInt8>? {
    guard take(UInt8(ascii: "\"")) else { return nil }
    let start = offset
    while let byte = peek {
      switch byte {
      case UInt8(ascii: "\""):
        offset += 1
        return bytes[start..<(offset - 1)]
      case UInt8(ascii: "\\"):
        guard offset + 1 < bytes.count else { return nil }
        offset += 2
        if bytes[offset - 1] == UInt8(ascii: "u") {
          guard bytes.count - offset >= 4, !bytes[offset..<(offset + 4)].contains(UInt8(ascii: "\"")) else {
            return nil
          }
          offset += 4
        }
      default: offset += 1
      }
    }
    return nil
  }
}
