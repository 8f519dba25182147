import SecretServiceWire

/// What the session bus sends the keyring's reads without GIO (SecretServiceWire): a
/// message, read by the signature it gives, from a bus where any program of the user may
/// own `org.freedesktop.secrets` and answer.
enum DBusMessageFuzzing {
  /// Labels: `return`, `error`, `call`, `signal` (a whole message of that kind), `other` (of
  /// a kind this client passes over), `incomplete` (a header that asks for more bytes than
  /// came), `refused`.
  static func run(_ bytes: [UInt8]) -> String {
    let length: Int?
    do {
      length = try DBusMessage.length(of: bytes[...])
    } catch {
      return "refused"
    }
    guard let length, length <= bytes.count else { return "incomplete" }
    let message: DBusMessage
    do {
      message = try DBusMessage(Array(bytes[..<length]))
    } catch {
      return "refused"
    }
    // A message reads the same twice, and what the Secret Service reads look for in it
    // never traps, whatever the body holds.
    precondition((try? DBusMessage(Array(bytes[..<length]))) == message, "a message read differently twice")
    for value in message.body { walk(value, depth: 0) }
    switch message.kind {
    case .methodReturn: return "return"
    case .error: return "error"
    case .methodCall: return "call"
    case .signal: return "signal"
    case nil: return "other"
    }
  }

  private static func walk(_ value: DBusValue, depth: Int) {
    _ = value.strings
    _ = value.entry("Attributes")?.unwrapped.forEachEntry { _, _ in }
    _ = value.forEachEntry { _, entry in walk(entry.unwrapped, depth: depth + 1) }
    guard depth < 8 else { return }
    for element in value.elements ?? value.fields ?? [] { walk(element.unwrapped, depth: depth + 1) }
  }
}
