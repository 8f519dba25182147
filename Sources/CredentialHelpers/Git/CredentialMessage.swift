/// One message of git's credential helper protocol (git-credential(1), "INPUT/OUTPUT
/// FORMAT"): `key=value` lines up to a blank line or the end of input, with `key[]`
/// lines building arrays. A `url` line is read as the `protocol`, `host` and `path` it
/// stands for, as git reads it.
///
/// Every attribute is kept in its original order, unknown ones included, so that a
/// helper can carry through what a newer git sends. Parsing is strict: git itself never
/// sends a NUL, a carriage return or a line without `=`, so any of them means the input
/// did not come from git, and the helper refuses it rather than guess.
public struct CredentialMessage: Sendable, Hashable {
  /// One `key=value` line; an array element's key keeps its `[]` suffix.
  public struct Attribute: Sendable, Hashable {
    public var key: String
    public var value: String

    public init(_ key: String, _ value: String) {
      self.key = key
      self.value = value
    }
  }

  /// The longest line accepted. Git caps nothing, but a URL path or a `wwwauth[]`
  /// challenge is far shorter than this; more is an attack or a mistake.
  public static let maximumLineLength = 64 * 1024
  /// The most input read for one message: many long `wwwauth[]` lines fit, a flood does not.
  public static let maximumInputLength = 1024 * 1024

  /// The attributes, in the order they were read or added.
  public var attributes: [Attribute]

  public init(_ attributes: [Attribute] = []) { self.attributes = attributes }

  /// The value of a single-valued attribute: the last one, as git reads repeated keys.
  public subscript(key: String) -> String? {
    get { attributes.last { $0.key == key }?.value }
    set {
      attributes.removeAll { $0.key == key }
      if let newValue { attributes.append(Attribute(key, newValue)) }
    }
  }

  /// The elements of the array attribute `name` (without `[]`), in order. An empty
  /// element clears what came before it, as git-credential(1) specifies.
  public func values(_ name: String) -> [String] {
    var values: [String] = []
    for attribute in attributes where attribute.key == name + "[]" {
      if attribute.value.isEmpty { values.removeAll() } else { values.append(attribute.value) }
    }
    return values
  }

  /// Appends one element to the array attribute `name` (without `[]`).
  public mutating func append(_ name: String, _ value: String) { attributes.append(Attribute(name + "[]", value)) }

  /// Reads one message from `bytes`; what follows its terminating blank line is ignored.
  public static func parse(_ bytes: [UInt8]) throws(CredentialMessageError) -> CredentialMessage {
    let newline = UInt8(ascii: "\n")
    var attributes: [Attribute] = []
    var start = 0
    var lineNumber = 0
    while start < bytes.count {
      let end = bytes[start...].firstIndex(of: newline) ?? bytes.count
      lineNumber += 1
      if end > maximumInputLength { throw .inputTooLong }
      let line = bytes[start..<end]
      if line.isEmpty { break }
      if line.count > maximumLineLength { throw .lineTooLong(line: lineNumber) }
      if line.contains(0) { throw .nulByte(line: lineNumber) }
      if line.contains(UInt8(ascii: "\r")) { throw .carriageReturn(line: lineNumber) }
      guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else { throw .missingEquals(line: lineNumber) }
      guard equals > line.startIndex else { throw .emptyKey(line: lineNumber) }
      guard let key = String(validating: line[..<equals], as: UTF8.self),
        let value = String(validating: line[(equals + 1)...], as: UTF8.self)
      else { throw .invalidUTF8(line: lineNumber) }
      if key == "url" {
        // Read as the attributes it stands for (git-credential(1), "url"), replacing any
        // read before it, as git reads it: what lets a tool that has only a URL ask
        // (tokenctl's Python keyring backend), with the one URL rule of every helper.
        let parts = try CredentialMessage.reading(value, line: lineNumber)
        attributes.removeAll { ["protocol", "host", "path", "username", "password"].contains($0.key) }
        attributes += parts.attributes
      } else {
        attributes.append(Attribute(key, value))
      }
      start = end + 1
    }
    return CredentialMessage(attributes)
  }

  /// Checks that the attributes every lookup needs are there: `protocol` and `host`.
  public func requireProtocolAndHost() throws(CredentialMessageError) {
    if self["protocol"]?.isEmpty ?? true { throw .missingAttribute("protocol") }
    if self["host"]?.isEmpty ?? true { throw .missingAttribute("host") }
  }

  /// The message as git reads it: one `key=value` line per attribute. No blank line
  /// follows, since the end of a helper's output ends the message.
  ///
  /// Throws when a key or value holds a line break or a NUL, which would let a value
  /// (a token from a server, say) inject attributes of its own.
  public func serialized() throws(CredentialMessageError) -> String {
    var text = ""
    for attribute in attributes {
      for part in [attribute.key, attribute.value] where part.utf8.contains(where: { $0 == 0 || $0 == 10 || $0 == 13 })
      {
        throw .unsafeValue(key: attribute.key)
      }
      if attribute.key.isEmpty || attribute.key.contains("=") { throw .unsafeValue(key: attribute.key) }
      text += attribute.key + "=" + attribute.value + "\n"
    }
    return text
  }
}
