/// A TOML table: keys in the order they were written, each with its value and where it was
/// written.
///
/// Equality ignores key order and positions, as TOML does: two documents that say the
/// same thing are equal. The description redacts the values of keys that look secret, so
/// that a table printed in an error or a log never shows a client secret.
public struct TOMLTable: Sendable {
  /// A key's value and where it was written.
  public struct Entry: Sendable, Hashable {
    /// The value.
    public var value: TOMLValue
    /// Where the key first appears: in a `key = value` line, a dotted key, or a header.
    public var keyPosition: TOMLPosition
    /// Where the value starts; for a table, the same as `keyPosition`.
    public var valuePosition: TOMLPosition

    public init(value: TOMLValue, keyPosition: TOMLPosition = .unknown, valuePosition: TOMLPosition = .unknown) {
      self.value = value
      self.keyPosition = keyPosition
      self.valuePosition = valuePosition
    }
  }

  private var entries: [String: Entry] = [:]
  /// The keys, in the order they were first written.
  public private(set) var keys: [String] = []

  /// An empty table.
  public init() {}

  /// The value under `key`; setting `nil` removes the key, setting a new key appends it.
  public subscript(key: String) -> TOMLValue? {
    get { entries[key]?.value }
    set {
      if let newValue {
        if entries[key] != nil {
          entries[key]?.value = newValue
        } else {
          keys.append(key)
          entries[key] = Entry(value: newValue)
        }
      } else if entries.removeValue(forKey: key) != nil {
        keys.removeAll { $0 == key }
      }
    }
  }

  /// The value under `key` with its positions.
  public func entry(_ key: String) -> Entry? { entries[key] }

  /// Appends `key`, which must not be present yet (the parser has checked).
  mutating func append(_ key: String, _ entry: Entry) {
    keys.append(key)
    entries[key] = entry
  }

  /// The number of keys.
  public var count: Int { keys.count }

  /// Whether the table has no keys.
  public var isEmpty: Bool { keys.isEmpty }

  /// Whether the value of `key` must never be shown: its name contains "secret", "token"
  /// or "password", whatever the case.
  public static func isSensitive(_ key: String) -> Bool {
    let lowered = key.lowercased()
    return ["secret", "token", "password"].contains { lowered.contains($0) }
  }

  /// `key` as written in TOML: bare when it can be, quoted otherwise.
  public static func displayKey(_ key: String) -> String {
    let bare = !key.isEmpty && key.utf8.allSatisfy(TOMLParser.isBareKeyByte)
    return bare ? key : TOMLValue.quoted(key)
  }

  /// A dotted key path as written in TOML: `types.corp`, `a."b c"`.
  public static func displayPath(_ path: [String]) -> String {
    path.map(displayKey).joined(separator: ".")
  }
}

extension TOMLTable: Hashable {
  public static func == (lhs: TOMLTable, rhs: TOMLTable) -> Bool {
    lhs.entries.count == rhs.entries.count
      && lhs.entries.allSatisfy { key, entry in rhs.entries[key]?.value == entry.value }
  }

  public func hash(into hasher: inout Hasher) {
    // Order-independent, to agree with ==: each key and value hashed on its own, combined
    // by a commutative sum.
    var combined = 0
    for (key, entry) in entries {
      var inner = Hasher()
      inner.combine(key)
      inner.combine(entry.value)
      combined = combined &+ inner.finalize()
    }
    hasher.combine(entries.count)
    hasher.combine(combined)
  }
}

extension TOMLTable: CustomStringConvertible {
  /// The table as a TOML inline table, in key order, secrets redacted.
  public var description: String {
    if keys.isEmpty { return "{}" }
    let fields = keys.map { key in
      let value = Self.isSensitive(key) ? "<redacted>" : (entries[key]?.value.description ?? "")
      return Self.displayKey(key) + " = " + value
    }
    return "{ " + fields.joined(separator: ", ") + " }"
  }
}

extension TOMLTable: ExpressibleByDictionaryLiteral {
  public init(dictionaryLiteral elements: (String, TOMLValue)...) {
    for (key, value) in elements { self[key] = value }
  }
}
