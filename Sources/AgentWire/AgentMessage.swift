/// One message between a client and the agent (tokenctl-agent(1)): a kind and ordered
/// `key=value` fields, framed by a four-byte length.
///
/// A text format of our own rather than JSON: the clients' fast path decodes an answer
/// with a loop over bytes, without Codable's machinery, whose code pages cost start-up
/// memory; and like git's credential protocol it is readable in a trace. Values escape
/// `%`, line breaks and NUL as `%25`, `%0A`, `%0D`, `%00`, so any text crosses intact.
///
/// Frame: length (UInt32, big-endian) of the payload, then the payload:
///
///     tokenctl-agent/1 KIND\n
///     key=value\n …
///
/// A field may repeat: records of a list are runs of fields, each starting at its first key.
public struct AgentMessage: Sendable, Hashable {
  /// The protocol version this code speaks. A peer speaking another gets `unsupported`.
  public static let version = 1
  /// The largest request the agent reads: a credential request is at most 64 KiB.
  public static let maximumRequestSize = 128 * 1024
  /// The largest answer a client reads: the listing of some 10,000 accounts.
  public static let maximumResponseSize = 8 * 1024 * 1024
  static let maximumKeyLength = 32

  public struct Field: Sendable, Hashable {
    public var key: String
    public var value: String
    public init(_ key: String, _ value: String) {
      self.key = key
      self.value = value
    }
  }

  public var kind: String
  public var fields: [Field]

  public init(_ kind: String, _ fields: [Field] = []) {
    self.kind = kind
    self.fields = fields
  }

  /// The first value of `key`.
  public subscript(key: String) -> String? {
    fields.first { $0.key == key }?.value
  }

  /// Every value of `key`, in order.
  public func values(_ key: String) -> [String] {
    fields.filter { $0.key == key }.map { $0.value }
  }

  public mutating func append(_ key: String, _ value: String) {
    fields.append(Field(key, value))
  }

  /// The message framed for the socket.
  public func framed() -> [UInt8] {
    var payload = Array("tokenctl-agent/\(Self.version) \(kind)\n".utf8)
    for field in fields {
      payload += field.key.utf8
      payload.append(UInt8(ascii: "="))
      for byte in field.value.utf8 {
        switch byte {
        case UInt8(ascii: "%"), 10, 13, 0:
          payload += [UInt8(ascii: "%"), Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 15)]]
        default: payload.append(byte)
        }
      }
      payload.append(10)
    }
    let count = UInt32(payload.count)
    return [UInt8(count >> 24), UInt8((count >> 16) & 255), UInt8((count >> 8) & 255), UInt8(count & 255)] + payload
  }

  private static let hex = Array("0123456789ABCDEF".utf8)

  /// The payload's length from a frame's first four bytes.
  public static func payloadLength(_ header: some Collection<UInt8>) -> Int {
    header.reduce(0) { $0 << 8 | Int($1) }
  }

  /// Reads a payload (a frame without its length). Refuses another version, a malformed
  /// line, a bad escape, a key that is not `[a-z0-9-]`, and text that is not UTF-8.
  public init(payload: some Collection<UInt8>) throws(AgentProtocolError) {
    var lines = payload.split(separator: 10, omittingEmptySubsequences: false)
    guard lines.last?.isEmpty == true else { throw .malformed("the message does not end with a line break") }
    lines.removeLast()
    guard let header = lines.first, let headerText = String(validating: header, as: UTF8.self) else {
      throw .malformed("the message has no header line")
    }
    let prefix = "tokenctl-agent/"
    guard headerText.hasPrefix(prefix), let space = headerText.firstIndex(of: " ") else {
      throw .malformed("the header is not 'tokenctl-agent/VERSION KIND'")
    }
    let versionText = headerText[headerText.index(headerText.startIndex, offsetBy: prefix.count)..<space]
    guard let version = Int(versionText), versionText.allSatisfy({ $0.isASCII }) else {
      throw .malformed("the header's version is not a number")
    }
    guard version == Self.version else { throw .unsupportedVersion(version) }
    let kind = String(headerText[headerText.index(after: space)...])
    guard Self.isKey(kind) else { throw .malformed("the message kind is not [a-z0-9-]") }
    var fields: [Field] = []
    for line in lines.dropFirst() {
      guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else {
        throw .malformed("a field has no '='")
      }
      guard let key = String(validating: line[line.startIndex..<equals], as: UTF8.self), Self.isKey(key) else {
        throw .malformed("a field's key is not [a-z0-9-]")
      }
      fields.append(Field(key, try Self.unescape(line[line.index(after: equals)...])))
    }
    self.init(kind, fields)
  }

  static func isKey(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.count <= maximumKeyLength
      && text.utf8.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == UInt8(ascii: "-") }
  }

  private static func unescape(_ bytes: some Collection<UInt8>) throws(AgentProtocolError) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var index = bytes.startIndex
    while index != bytes.endIndex {
      let byte = bytes[index]
      index = bytes.index(after: index)
      guard byte == UInt8(ascii: "%") else {
        out.append(byte)
        continue
      }
      guard index != bytes.endIndex, let high = hexValue(bytes[index]) else { throw .malformed("a bad % escape") }
      index = bytes.index(after: index)
      guard index != bytes.endIndex, let low = hexValue(bytes[index]) else { throw .malformed("a bad % escape") }
      index = bytes.index(after: index)
      out.append(high << 4 | low)
    }
    guard let text = String(validating: out, as: UTF8.self) else { throw .malformed("a value is not UTF-8") }
    return text
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 48...57: byte - 48
    case 65...70: byte - 55
    case 97...102: byte - 87
    default: nil
    }
  }
}
