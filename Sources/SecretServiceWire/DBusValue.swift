/// A value read from a D-Bus message, whatever its type: what a reply carries, read by the
/// signature the message gives (``DBusReader``).
public enum DBusValue: Equatable, Sendable {
  /// `y`, `b`, `n`, `q`, `i`, `u`, `x`, `t`, `h`: every integer, and a boolean as 0 or 1.
  case integer(UInt64)
  /// `d`
  case double(Double)
  /// `s`, `o`, `g`
  case string(String)
  /// `ay`: bytes, kept as they are (a secret).
  case bytes([UInt8])
  /// `a…` but `ay`; a dictionary's entries are ``structure(_:)``s of two.
  case array([DBusValue])
  /// `(…)` and `{…}`
  case structure([DBusValue])
  /// `v`
  indirect case variant(DBusValue)

  public var string: String? {
    if case .string(let text) = self { return text }
    return nil
  }

  public var elements: [DBusValue]? {
    if case .array(let values) = self { return values }
    return nil
  }

  public var fields: [DBusValue]? {
    if case .structure(let values) = self { return values }
    return nil
  }

  /// A variant's value; any other value as it is.
  public var unwrapped: DBusValue {
    if case .variant(let value) = self { return value.unwrapped }
    return self
  }

  /// `as` / `ao`: the strings, nil when any element is not one.
  public var strings: [String]? {
    guard let elements else { return nil }
    var strings: [String] = []
    for element in elements {
      guard let text = element.string else { return nil }
      strings.append(text)
    }
    return strings
  }

  /// `a{s…}`: calls `body` with each entry, in order; false when this is not a dictionary
  /// with string keys. No `Dictionary` is built: a process that reads one item pays for
  /// every generic type it instantiates first (the runtime looks up its conformances),
  /// more than for the lookups.
  public func forEachEntry(_ body: (String, DBusValue) -> Void) -> Bool {
    guard let elements else { return false }
    for element in elements {
      guard let pair = element.fields, pair.count == 2, let key = pair[0].string else { return false }
      body(key, pair[1])
    }
    return true
  }

  /// `a{s…}`: the value of the entry `key`, the last where there are several.
  public func entry(_ key: String) -> DBusValue? {
    var found: DBusValue?
    _ = forEachEntry { if $0 == key { found = $1 } }
    return found
  }
}
