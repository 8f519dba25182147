/// A strict parser for the subset of TOML 1.0 that tokenctl's files use.
///
/// Supported, with TOML 1.0 semantics: comments; `[table]` and `[dotted.table]` headers;
/// `key = value` with bare, quoted and dotted keys; basic, literal and multi-line strings
/// with every TOML 1.0 escape; decimal integers (`+`, `-`, `_` between digits); booleans;
/// arrays (multi-line, trailing comma, comments inside); inline tables. LF and CRLF line
/// endings and a leading byte order mark are accepted.
///
/// Not supported, and refused with an error that says so: floats (`inf`, `nan`
/// included), offset and local dates and times, hexadecimal, octal and binary integers,
/// and arrays of tables (`[[name]]`).
///
/// Also refused: duplicate keys, a table defined twice, a key that is both a value and a
/// table, extending an inline table, invalid UTF-8, NUL and other control characters
/// outside escapes, documents over ``maximumSize`` bytes, and nesting deeper than
/// ``maximumDepth``.
///
/// The parser runs in time linear in its input and never traps, whatever the bytes: it
/// reads untrusted files and is fuzzed. Its recursion is bounded by ``maximumDepth``.
///
/// Errors are ``TOMLError``s whose message starts with `source:line:column:` and says
/// what was expected. They quote keys, never values: a value may be a client secret.
public struct TOMLParser {
  /// The largest document accepted: 1 MiB. A configuration file is a few hundred bytes;
  /// the limit keeps a mistaken path (a log, a disk image) from being read into memory.
  public static let maximumSize = 1 << 20

  /// The deepest nesting accepted, counting every table and array below the root. Deep
  /// enough for any real file, shallow enough that recursion cannot exhaust the stack.
  public static let maximumDepth = 32

  /// Parses `bytes` as a TOML document; `source` names it in errors (a file path).
  public static func parse(_ bytes: [UInt8], source: String = "input") throws(TOMLError) -> TOMLTable {
    var parser = TOMLParser(bytes: bytes, source: source)
    return try parser.document()
  }

  /// Parses `text` as a TOML document; `source` names it in errors.
  public static func parse(_ text: String, source: String = "input") throws(TOMLError) -> TOMLTable {
    try parse(Array(text.utf8), source: source)
  }

  /// Whether `byte` may appear in a bare key: `A-Za-z0-9_-`.
  static func isBareKeyByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
      return true
    default: return false
    }
  }

  // MARK: - State

  private let bytes: [UInt8]
  private let source: String
  /// The next byte to read.
  private var index = 0
  /// Where the document starts: 3 after a byte order mark.
  private var start = 0
  /// The last position computed, so that computing positions in document order is linear.
  private var located = (offset: 0, line: 1, column: 1)
  /// Numbers the header sections and inline tables: dotted keys may only extend a table
  /// that dotted keys created in the same one.
  private var sectionCount = 0

  private init(bytes: [UInt8], source: String) {
    self.bytes = bytes
    self.source = source
  }

  /// A table while it is being built. A class, so that adding a key deep in the tree does
  /// not copy the tables above it, which would make parsing quadratic.
  private final class Node {
    /// How a table came to exist, which decides what may add to it (TOML 1.0, "Table").
    enum Origin {
      /// Named as the parent in a header (`a` in `[a.b]`); a later `[a]` may define it.
      case implicit
      /// Defined by a header, or the root: only its own section adds keys to it.
      case header
      /// Created by dotted keys (`a.b = 1`) in that section, which alone may extend it.
      case dotted(section: Int)
    }

    enum Slot {
      case value(TOMLValue)
      case table(Node)
    }

    struct Child {
      var slot: Slot
      var keyPosition: TOMLPosition
      var valuePosition: TOMLPosition
    }

    var origin: Origin
    let depth: Int
    /// The key path from the root of the document or inline table, for messages.
    let path: [String]
    var keys: [String] = []
    var children: [String: Child] = [:]

    init(origin: Origin, depth: Int, path: [String]) {
      self.origin = origin
      self.depth = depth
      self.path = path
    }

    func add(_ key: String, _ child: Child) {
      keys.append(key)
      children[key] = child
    }

    /// The finished table; each node is converted once, so this is linear too.
    func table() -> TOMLTable {
      var table = TOMLTable()
      for key in keys {
        guard let child = children[key] else { continue }
        switch child.slot {
        case .value(let value):
          table.append(
            key, .init(value: value, keyPosition: child.keyPosition, valuePosition: child.valuePosition))
        case .table(let node):
          table.append(
            key, .init(value: .table(node.table()), keyPosition: child.keyPosition, valuePosition: child.keyPosition))
        }
      }
      return table
    }
  }

  /// One component of a key, and where it was written.
  private struct KeyPart {
    var name: String
    var position: TOMLPosition
  }

  // MARK: - Document structure

  private mutating func document() throws(TOMLError) -> TOMLTable {
    guard bytes.count <= Self.maximumSize else {
      throw failure(
        "the file is larger than 1 MiB (\(Self.maximumSize) bytes); is this the right file?",
        at: TOMLPosition(line: 1, column: 1))
    }
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
      start = 3
      index = 3
      located = (3, 1, 1)
    }
    try validateEncoding()
    let root = Node(origin: .header, depth: 0, path: [])
    var current = root
    var section = 0
    while true {
      skipBlanks()
      guard let byte = peek() else { break }
      switch byte {
      case Self.lineFeed, Self.carriageReturn:
        try newline()
      case UInt8(ascii: "#"):
        try comment()
      case UInt8(ascii: "["):
        (current, section) = try header(in: root)
        try endOfLine(after: "the table header [\(TOMLTable.displayPath(current.path))]")
      default:
        let path = try keyValue(in: current, section: section)
        try endOfLine(after: "the value of key '\(TOMLTable.displayPath(current.path + path))'")
      }
    }
    return root.table()
  }

  /// Checks the whole document up front: valid UTF-8 (RFC 3629: no overlong forms, no
  /// surrogates, nothing above U+10FFFF) and no NUL byte, which TOML forbids everywhere.
  private mutating func validateEncoding() throws(TOMLError) {
    var offset = start
    while offset < bytes.count {
      let lead = bytes[offset]
      if lead == 0 { throw failure("a NUL byte is not allowed in a TOML document", at: offset) }
      if lead < 0x80 {
        offset += 1
        continue
      }
      // The allowed range of the second byte depends on the first (RFC 3629 §4).
      let length: Int
      var second: ClosedRange<UInt8> = 0x80...0xBF
      switch lead {
      case 0xC2...0xDF: length = 2
      case 0xE0:
        length = 3
        second = 0xA0...0xBF
      case 0xE1...0xEC, 0xEE...0xEF: length = 3
      case 0xED:
        length = 3
        second = 0x80...0x9F
      case 0xF0:
        length = 4
        second = 0x90...0xBF
      case 0xF1...0xF3: length = 4
      case 0xF4:
        length = 4
        second = 0x80...0x8F
      default: throw failure("invalid UTF-8", at: offset)
      }
      guard offset + length <= bytes.count, second.contains(bytes[offset + 1]) else {
        throw failure("invalid UTF-8", at: offset)
      }
      for continuation in (offset + 2)..<(offset + length) where bytes[continuation] & 0xC0 != 0x80 {
        throw failure("invalid UTF-8", at: offset)
      }
      offset += length
    }
  }

  /// `[a.b]`: finds or creates the table and returns it with its new section number.
  private mutating func header(in root: Node) throws(TOMLError) -> (Node, Int) {
    let open = index
    index += 1
    if peek() == UInt8(ascii: "[") {
      throw failure("arrays of tables ([[name]]) are not supported here", at: open)
    }
    let path = try key()
    guard peek() == UInt8(ascii: "]") else {
      throw failure(
        "expected ']' after table name '\(TOMLTable.displayPath(path.map(\.name)))' in a header", at: index)
    }
    index += 1
    guard path.count <= Self.maximumDepth else {
      throw failure("tables are nested deeper than \(Self.maximumDepth) levels", at: open)
    }
    sectionCount += 1
    var node = root
    for (offset, part) in path.enumerated() {
      let isLast = offset == path.count - 1
      let (table, first) = try childTable(part, under: node, creating: isLast ? .header : .implicit, by: "by a header")
      if isLast, let first {
        let shown = TOMLTable.displayPath(node.path + [part.name])
        switch table.origin {
        case .implicit: table.origin = .header
        case .header:
          throw failure("table [\(shown)] is defined twice; first at \(first)", at: part.position)
        case .dotted:
          throw failure("table [\(shown)] is already defined by dotted keys at \(first)", at: part.position)
        }
      }
      node = table
    }
    return (node, sectionCount)
  }

  /// `key = value` into `table`; returns the key path.
  @discardableResult
  private mutating func keyValue(in table: Node, section: Int) throws(TOMLError) -> [String] {
    let path = try key()
    let names = path.map(\.name)
    guard peek() == UInt8(ascii: "=") else {
      throw failure("expected '=' after key '\(TOMLTable.displayPath(table.path + names))'", at: index)
    }
    index += 1
    skipBlanks()
    // The tables a dotted key creates lie between `table` and the value.
    guard table.depth + path.count - 1 <= Self.maximumDepth else {
      throw failure("tables are nested deeper than \(Self.maximumDepth) levels", at: path[0].position)
    }
    let valuePosition = position(at: index)
    let value = try value(depth: table.depth + path.count, key: table.path + names)
    try insert(value, at: path, valuePosition: valuePosition, into: table, section: section)
    return names
  }

  /// Stores `value` under the dotted `path` relative to `table`, creating the tables the
  /// dotted key names (TOML 1.0, "Keys" and "Table").
  private mutating func insert(
    _ value: TOMLValue, at path: [KeyPart], valuePosition: TOMLPosition, into table: Node, section: Int
  ) throws(TOMLError) {
    var node = table
    for part in path.dropLast() {
      let (existing, first) = try childTable(
        part, under: node, creating: .dotted(section: section), by: "with dotted keys")
      if let first {
        let shown = TOMLTable.displayPath(node.path + [part.name])
        switch existing.origin {
        case .header:
          throw failure(
            "table [\(shown)] is defined by a header at \(first); add its keys under that header", at: part.position)
        case .dotted(let other) where other != section:
          throw failure(
            "table '\(shown)' was defined by dotted keys at \(first); add its keys there", at: part.position)
        case .dotted: break
        case .implicit: existing.origin = .dotted(section: section)
        }
      }
      node = existing
    }
    guard let last = path.last else { return }
    if let existing = node.children[last.name] {
      throw failure(
        "duplicate key '\(TOMLTable.displayPath(node.path + [last.name]))'; first defined at \(existing.keyPosition)",
        at: last.position)
    }
    node.add(last.name, .init(slot: .value(value), keyPosition: last.position, valuePosition: valuePosition))
  }

  /// The table `part` names under `node`, created with `origin` when there is none, with
  /// where it was first written if it already existed. A value there is an error: a table
  /// written inline cannot be extended (`how`: "by a header", "with dotted keys"), and a
  /// key with a value cannot also be a table.
  private func childTable(
    _ part: KeyPart, under node: Node, creating origin: Node.Origin, by how: String
  ) throws(TOMLError) -> (Node, first: TOMLPosition?) {
    guard let child = node.children[part.name] else {
      let created = Node(origin: origin, depth: node.depth + 1, path: node.path + [part.name])
      node.add(part.name, .init(slot: .table(created), keyPosition: part.position, valuePosition: part.position))
      return (created, nil)
    }
    func shown() -> String { TOMLTable.displayPath(node.path + [part.name]) }
    switch child.slot {
    case .value(.table):
      throw failure(
        "table '\(shown())' was written inline at \(child.keyPosition), so it cannot be extended \(how)",
        at: part.position)
    case .value:
      throw failure(
        "key '\(shown())' already has a value (at \(child.keyPosition)), so it cannot also be a table",
        at: part.position)
    case .table(let table):
      return (table, child.keyPosition)
    }
  }

  /// A key: simple keys joined by dots, with blanks allowed around the dots. Leaves the
  /// blanks after it consumed.
  private mutating func key() throws(TOMLError) -> [KeyPart] {
    var parts: [KeyPart] = []
    while true {
      skipBlanks()
      parts.append(try simpleKey())
      skipBlanks()
      guard peek() == UInt8(ascii: ".") else { return parts }
      index += 1
    }
  }

  private mutating func simpleKey() throws(TOMLError) -> KeyPart {
    let position = position(at: index)
    switch peek() {
    case UInt8(ascii: "\""):
      if peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\"") {
        throw failure("a key cannot be a multi-line string", at: index)
      }
      return KeyPart(name: try basicString(), position: position)
    case UInt8(ascii: "'"):
      if peek(1) == UInt8(ascii: "'"), peek(2) == UInt8(ascii: "'") {
        throw failure("a key cannot be a multi-line string", at: index)
      }
      return KeyPart(name: try literalString(), position: position)
    default:
      let begin = index
      while let byte = peek(), Self.isBareKeyByte(byte) { index += 1 }
      guard index > begin else {
        throw failure("expected a key: letters, digits, '_' and '-', or a quoted string", at: index)
      }
      return KeyPart(name: String(decoding: bytes[begin..<index], as: UTF8.self), position: position)
    }
  }

  // MARK: - Values

  /// A value whose tables and arrays would sit at `depth`; `key` names it in messages.
  private mutating func value(depth: Int, key: [String]) throws(TOMLError) -> TOMLValue {
    switch peek() {
    case nil, Self.lineFeed, Self.carriageReturn, UInt8(ascii: "#"):
      throw failure("expected a value for key '\(TOMLTable.displayPath(key))'", at: index)
    case UInt8(ascii: "\""):
      if peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\"") {
        return .string(try multilineString(quote: UInt8(ascii: "\"")))
      }
      return .string(try basicString())
    case UInt8(ascii: "'"):
      if peek(1) == UInt8(ascii: "'"), peek(2) == UInt8(ascii: "'") {
        return .string(try multilineString(quote: UInt8(ascii: "'")))
      }
      return .string(try literalString())
    case UInt8(ascii: "["):
      guard depth <= Self.maximumDepth else {
        throw failure("arrays and tables are nested deeper than \(Self.maximumDepth) levels", at: index)
      }
      return try array(depth: depth, key: key)
    case UInt8(ascii: "{"):
      guard depth <= Self.maximumDepth else {
        throw failure("arrays and tables are nested deeper than \(Self.maximumDepth) levels", at: index)
      }
      return try inlineTable(depth: depth, key: key)
    default:
      return try bareValue(key: key)
    }
  }

  private mutating func array(depth: Int, key: [String]) throws(TOMLError) -> TOMLValue {
    let open = index
    index += 1
    var elements: [TOMLValue] = []
    func unterminated() -> String { "expected ']' to close the array of key '\(TOMLTable.displayPath(key))'" }
    while true {
      try skipBlanksNewlinesAndComments()
      guard let byte = peek() else { throw failure(unterminated(), at: open) }
      if byte == UInt8(ascii: "]") {
        index += 1
        return .array(elements)
      }
      elements.append(try value(depth: depth + 1, key: key))
      try skipBlanksNewlinesAndComments()
      switch peek() {
      case nil: throw failure(unterminated(), at: open)
      case UInt8(ascii: ","): index += 1
      case UInt8(ascii: "]"):
        index += 1
        return .array(elements)
      default:
        throw failure(
          "expected ',' or ']' after an element of the array of key '\(TOMLTable.displayPath(key))'", at: index)
      }
    }
  }

  /// `{ a = 1, b.c = "x" }`: on one line, no trailing comma, closed once written (TOML 1.0).
  private mutating func inlineTable(depth: Int, key: [String]) throws(TOMLError) -> TOMLValue {
    let open = index
    index += 1
    sectionCount += 1
    let section = sectionCount
    let table = Node(origin: .header, depth: depth, path: key)
    func shown() -> String { TOMLTable.displayPath(key) }
    skipBlanks()
    if peek() == UInt8(ascii: "}") {
      index += 1
      return .table(table.table())
    }
    while true {
      skipBlanks()
      switch peek() {
      case nil: throw failure("expected '}' to close the inline table of key '\(shown())'", at: open)
      case Self.lineFeed, Self.carriageReturn, UInt8(ascii: "#"):
        throw failure("expected a key; an inline table must be on one line (TOML 1.0)", at: index)
      case UInt8(ascii: "}"):
        throw failure("expected a key; a trailing comma is not allowed in an inline table (TOML 1.0)", at: index)
      default: break
      }
      try keyValue(in: table, section: section)
      skipBlanks()
      switch peek() {
      case UInt8(ascii: ","): index += 1
      case UInt8(ascii: "}"):
        index += 1
        return .table(table.table())
      case nil, Self.lineFeed, Self.carriageReturn:
        throw failure(
          "expected '}' to close the inline table of key '\(shown())' on the line it starts (TOML 1.0)", at: index)
      default:
        throw failure("expected ',' or '}' in the inline table of key '\(shown())'", at: index)
      }
    }
  }

  /// An integer or a boolean; recognises the other TOML scalars to say they are not
  /// supported. Never shows the text, which could be an unquoted secret.
  private mutating func bareValue(key path: [String]) throws(TOMLError) -> TOMLValue {
    let begin = index
    while let byte = peek(), Self.isBareValueByte(byte) { index += 1 }
    let token = Array(bytes[begin..<index])
    var key: String { TOMLTable.displayPath(path) }
    func expected() -> String {
      "expected a value for key '\(key)': a quoted string, an integer, true, false, an array or an inline table"
    }
    guard !token.isEmpty else { throw failure(expected(), at: begin) }
    if token == Array("true".utf8) { return .boolean(true) }
    if token == Array("false".utf8) { return .boolean(false) }

    let signed = token[0] == UInt8(ascii: "+") || token[0] == UInt8(ascii: "-")
    let body = Array(token.dropFirst(signed ? 1 : 0))
    let leadingDigits = body.prefix(while: Self.isDigit).count
    if body == Array("inf".utf8) || body == Array("nan".utf8) {
      throw failure("floating-point numbers are not supported here (key '\(key)')", at: begin)
    }
    if !signed,
      (leadingDigits == 4 && body.count > 4 && body[4] == UInt8(ascii: "-"))
        || (leadingDigits == 2 && body.count > 2 && body[2] == UInt8(ascii: ":"))
    {
      throw failure("dates and times are not supported here (key '\(key)')", at: begin)
    }
    if body.count >= 2, body[0] == UInt8(ascii: "0"),
      [UInt8(ascii: "x"), UInt8(ascii: "o"), UInt8(ascii: "b")].contains(body[1])
    {
      throw failure(
        "hexadecimal, octal and binary integers are not supported here; write key '\(key)' in decimal", at: begin)
    }
    if leadingDigits > 0,
      body.contains(where: { [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains($0) })
    {
      throw failure("floating-point numbers are not supported here (key '\(key)')", at: begin)
    }
    return .integer(try integer(body, negative: token[0] == UInt8(ascii: "-"), at: begin, expected: expected))
  }

  /// Decimal digits with single `_` between them, no leading zero (TOML 1.0, "Integer").
  private mutating func integer(
    _ body: [UInt8], negative: Bool, at begin: Int, expected: () -> String
  ) throws(TOMLError) -> Int64 {
    guard let first = body.first, let last = body.last, Self.isDigit(first), Self.isDigit(last) else {
      throw failure(expected(), at: begin)
    }
    if body.count > 1, first == UInt8(ascii: "0") {
      throw failure("leading zeros are not allowed in an integer", at: begin)
    }
    // Accumulated negatively, because Int64.min has no positive counterpart.
    var value: Int64 = 0
    var previous: UInt8 = 0
    for byte in body {
      if byte == UInt8(ascii: "_") {
        guard Self.isDigit(previous) else {
          throw failure("an underscore in an integer must sit between two digits", at: begin)
        }
      } else if Self.isDigit(byte) {
        let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
        let (next, overflow2) = shifted.subtractingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
        guard !overflow, !overflow2 else {
          throw failure("integer out of range: TOML integers are 64-bit", at: begin)
        }
        value = next
      } else {
        throw failure(expected(), at: begin)
      }
      previous = byte
    }
    if negative { return value }
    guard value != .min else { throw failure("integer out of range: TOML integers are 64-bit", at: begin) }
    return -value
  }

  // MARK: - Strings

  /// `"…"`, escapes resolved.
  private mutating func basicString() throws(TOMLError) -> String {
    let open = index
    index += 1
    var buffer: [UInt8] = []
    while true {
      switch peek() {
      case nil, Self.lineFeed, Self.carriageReturn:
        throw failure("expected '\"' to end the string on the line it starts; use \"\"\" for several lines", at: open)
      case UInt8(ascii: "\""):
        index += 1
        return String(decoding: buffer, as: UTF8.self)
      case UInt8(ascii: "\\"):
        try escape(into: &buffer, multiline: false)
      case let byte?:
        try checkNotControl(byte, in: "a string")
        buffer.append(byte)
        index += 1
      }
    }
  }

  /// `'…'`, taken as written.
  private mutating func literalString() throws(TOMLError) -> String {
    let open = index
    index += 1
    let begin = index
    while true {
      switch peek() {
      case nil, Self.lineFeed, Self.carriageReturn:
        throw failure("expected \"'\" to end the literal string on the line it starts", at: open)
      case UInt8(ascii: "'"):
        let text = String(decoding: bytes[begin..<index], as: UTF8.self)
        index += 1
        return text
      case let byte?:
        try checkNotControl(byte, in: "a literal string")
        index += 1
      }
    }
  }

  /// `"""…"""` (escapes resolved) or `'''…'''` (as written). A newline right after the
  /// opening delimiter is dropped; CRLF becomes LF; up to two quotes may precede the
  /// closing delimiter.
  private mutating func multilineString(quote: UInt8) throws(TOMLError) -> String {
    let open = index
    let delimiter = quote == UInt8(ascii: "\"") ? "\"\"\"" : "'''"
    index += 3
    if peek() == Self.lineFeed {
      index += 1
    } else if peek() == Self.carriageReturn, peek(1) == Self.lineFeed {
      index += 2
    }
    var buffer: [UInt8] = []
    while true {
      switch peek() {
      case nil:
        throw failure("expected \(delimiter) to end the multi-line string", at: open)
      case quote:
        var run = 0
        while peek(run) == quote { run += 1 }
        if run >= 3 {
          guard run <= 5 else {
            throw failure("too many quotes: at most two may come right before the closing \(delimiter)", at: index)
          }
          buffer.append(contentsOf: repeatElement(quote, count: run - 3))
          index += run
          return String(decoding: buffer, as: UTF8.self)
        }
        buffer.append(contentsOf: repeatElement(quote, count: run))
        index += run
      case UInt8(ascii: "\\") where quote == UInt8(ascii: "\""):
        try escape(into: &buffer, multiline: true)
      case Self.lineFeed:
        buffer.append(Self.lineFeed)
        index += 1
      case Self.carriageReturn:
        try newline()
        buffer.append(Self.lineFeed)
      case let byte?:
        try checkNotControl(byte, in: "a string")
        buffer.append(byte)
        index += 1
      }
    }
  }

  /// An escape sequence at `\` (TOML 1.0, "String"); in a multi-line string also the
  /// line-ending backslash, which drops the newline and the blanks after it.
  private mutating func escape(into buffer: inout [UInt8], multiline: Bool) throws(TOMLError) {
    let backslash = index
    index += 1
    let simple: UInt8?
    switch peek() {
    case UInt8(ascii: "b"): simple = 0x08
    case UInt8(ascii: "t"): simple = 0x09
    case UInt8(ascii: "n"): simple = 0x0A
    case UInt8(ascii: "f"): simple = 0x0C
    case UInt8(ascii: "r"): simple = 0x0D
    case UInt8(ascii: "\""): simple = UInt8(ascii: "\"")
    case UInt8(ascii: "\\"): simple = UInt8(ascii: "\\")
    case UInt8(ascii: "u"):
      try unicodeEscape(digits: 4, at: backslash, into: &buffer)
      return
    case UInt8(ascii: "U"):
      try unicodeEscape(digits: 8, at: backslash, into: &buffer)
      return
    default: simple = nil
    }
    if let simple {
      buffer.append(simple)
      index += 1
      return
    }
    if multiline {
      var after = index
      while after < bytes.count, bytes[after] == Self.space || bytes[after] == Self.tab { after += 1 }
      if after < bytes.count, bytes[after] == Self.lineFeed || bytes[after] == Self.carriageReturn {
        index = after
        while let byte = peek() {
          if byte == Self.space || byte == Self.tab || byte == Self.lineFeed {
            index += 1
          } else if byte == Self.carriageReturn {
            try newline()
          } else {
            break
          }
        }
        return
      }
    }
    throw failure(
      "invalid escape sequence; expected \\b, \\t, \\n, \\f, \\r, \\\", \\\\, \\uXXXX or \\UXXXXXXXX", at: backslash)
  }

  private mutating func unicodeEscape(digits: Int, at backslash: Int, into buffer: inout [UInt8]) throws(TOMLError) {
    index += 1
    var value: UInt32 = 0
    for _ in 0..<digits {
      guard let byte = peek(), let digit = Self.hexValue(byte) else {
        throw failure("expected \(digits) hexadecimal digits after \\\(digits == 4 ? "u" : "U")", at: backslash)
      }
      // At most 8 digits: 32 bits, no overflow.
      value = value << 4 | UInt32(digit)
      index += 1
    }
    guard let scalar = Unicode.Scalar(value) else {
      throw failure(
        "escape is not a Unicode scalar value (surrogates and values above 10FFFF are not allowed)", at: backslash)
    }
    UTF8.encode(scalar) { buffer.append($0) }
  }

  /// Refuses the control characters TOML 1.0 forbids in strings and comments: all but tab.
  private mutating func checkNotControl(_ byte: UInt8, in context: String) throws(TOMLError) {
    guard (byte < 0x20 && byte != Self.tab) || byte == 0x7F else { return }
    let hex = String(byte, radix: 16, uppercase: true)
    let code = "U+" + String(repeating: "0", count: 4 - hex.count) + hex
    throw failure("control character \(code) in \(context); write it as an escape", at: index)
  }

  // MARK: - Blanks, newlines, comments

  private mutating func skipBlanks() {
    while let byte = peek(), byte == Self.space || byte == Self.tab { index += 1 }
  }

  /// Inside arrays, where newlines and comments may appear between elements.
  private mutating func skipBlanksNewlinesAndComments() throws(TOMLError) {
    while let byte = peek() {
      switch byte {
      case Self.space, Self.tab, Self.lineFeed: index += 1
      case Self.carriageReturn: try newline()
      case UInt8(ascii: "#"): try comment()
      default: return
      }
    }
  }

  /// LF or CRLF; a lone CR is not a newline in TOML.
  private mutating func newline() throws(TOMLError) {
    if peek() == Self.carriageReturn {
      guard peek(1) == Self.lineFeed else {
        throw failure("a carriage return must be followed by a line feed", at: index)
      }
      index += 1
    }
    index += 1
  }

  /// `# …` up to, not including, the end of the line.
  private mutating func comment() throws(TOMLError) {
    index += 1
    while let byte = peek(), byte != Self.lineFeed {
      if byte == Self.carriageReturn {
        guard peek(1) == Self.lineFeed else {
          throw failure("a carriage return must be followed by a line feed", at: index)
        }
        return
      }
      try checkNotControl(byte, in: "a comment")
      index += 1
    }
  }

  /// Blanks, an optional comment, then a newline or the end of the document.
  // `what` is built only for the message: a document's every line ends here, and the key
  // paths made for it were a third of a parse.
  private mutating func endOfLine(after what: @autoclosure () -> String) throws(TOMLError) {
    skipBlanks()
    if peek() == UInt8(ascii: "#") { try comment() }
    switch peek() {
    case nil: return
    case Self.lineFeed, Self.carriageReturn: try newline()
    default: throw failure("expected the end of the line after \(what())", at: index)
    }
  }

  // MARK: - Bytes and positions

  private static let tab: UInt8 = 0x09
  private static let lineFeed: UInt8 = 0x0A
  private static let carriageReturn: UInt8 = 0x0D
  private static let space: UInt8 = 0x20

  private func peek(_ ahead: Int = 0) -> UInt8? {
    let offset = index + ahead
    return offset < bytes.count ? bytes[offset] : nil
  }

  private static func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
  }

  /// What an unquoted value may be made of: enough to take in a float or a date whole, so
  /// the error can name it.
  private static func isBareValueByte(_ byte: UInt8) -> Bool {
    isBareKeyByte(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
  }

  /// The line and column of `offset`. Positions are asked for in document order, so
  /// counting on from the last one keeps parsing linear; only an error looks back.
  private mutating func position(at offset: Int) -> TOMLPosition {
    if offset < located.offset { located = (start, 1, 1) }
    var (current, line, column) = located
    let end = min(offset, bytes.count)
    while current < end {
      let byte = bytes[current]
      if byte == Self.lineFeed {
        line += 1
        column = 1
      } else if byte & 0xC0 != 0x80 {
        // Continuation bytes belong to the scalar already counted.
        column += 1
      }
      current += 1
    }
    located = (current, line, column)
    return TOMLPosition(line: line, column: column)
  }

  private mutating func failure(_ message: String, at offset: Int) -> TOMLError {
    failure(message, at: position(at: offset))
  }

  private func failure(_ message: String, at position: TOMLPosition) -> TOMLError {
    TOMLError(source: source, position: position, reason: message)
  }
}
