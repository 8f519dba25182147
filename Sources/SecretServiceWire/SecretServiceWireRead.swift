/// The Secret Service's reads over ``DBusWireConnection``, for a process that only reads:
/// the same calls as the keyring store's reads through GDBus (`SearchItems`,
/// `OpenSession("plain")`, `GetSecrets`, `GetAll`), in three round trips: the search (with
/// the authentication and `Hello`), the session, and the secrets and properties with the
/// session's `Close`.
///
/// Only the ordinary case is read here: every item found unlocked, a plain session
/// granted, every secret in it. Anything else (a locked item, nothing found, an error
/// reply, a bus it cannot reach) is the caller's to read through GDBus, which unlocks,
/// prompts, explains and words errors, in one place; from the search made here where
/// there was one, so that a provider that asks for a password on a search (KeePassXC)
/// asks once.
public enum SecretServiceWireRead {
  /// What a read got to.
  public enum Outcome: Sendable, Equatable {
    /// The ordinary read, done.
    case read([Item])
    /// The search's answer, and no more: the rest is GDBus's.
    case searched(unlocked: [String], locked: [String])
    /// The service did not answer within the timeout: GDBus would wait as long again.
    case noAnswer
  }

  /// An item found: its object path, its `Attributes` and `Modified` properties (empty and
  /// 0 where not read), and its secret (nil where not read).
  public struct Item: Sendable, Equatable {
    public var path: String
    public var attributes: [String: String]
    public var modified: UInt64
    public var secret: [UInt8]?
  }

  /// The Secret Service's names on the bus, which the store's GDBus calls use too.
  public static let serviceName = "org.freedesktop.secrets"
  public static let servicePath = "/org/freedesktop/secrets"
  public static let serviceInterface = "org.freedesktop.Secret.Service"
  public static let itemInterface = "org.freedesktop.Secret.Item"

  /// How many items one `GetSecrets` reads, and how many calls go out in one write: a
  /// group of 1,000 accounts is read in replies of a bounded size.
  static let callsAtOnce = 50

  /// The items matching `attributes`, each with its secret in a session of `algorithm` (the
  /// spec's `plain`) when `secrets`, and with its properties when `properties` says so of
  /// the number of items found; nil where not even the search was made. `busAddress` is
  /// `DBUS_SESSION_BUS_ADDRESS`.
  public static func items(
    matching attributes: [String: String], properties: (_ found: Int) -> Bool, secrets: Bool, algorithm: String,
    busAddress: String?, runtimeDirectory: String?, timeoutMilliseconds: Int32
  ) -> Outcome? {
    guard let address = DBusAddress(busAddress, runtimeDirectory: runtimeDirectory),
      let bus = DBusWireConnection(address, timeoutMilliseconds: timeoutMilliseconds)
    else { return nil }
    do {
      return try read(bus, attributes, properties: properties, secrets: secrets, algorithm: algorithm)
    } catch .timedOut {
      return .noAnswer
    } catch {
      return nil
    }
  }

  /// What a search found: the paths of the unlocked items and of the locked ones.
  static func found(_ reply: DBusMessage) -> (unlocked: [String], locked: [String])? {
    guard let found = returned(reply), found.count == 2, let unlocked = found[0].strings,
      let locked = found[1].strings
    else { return nil }
    return (unlocked, locked)
  }

  private static func read(
    _ bus: DBusWireConnection, _ attributes: [String: String], properties: (Int) -> Bool, secrets: Bool,
    algorithm: String
  ) throws(DBusWireConnection.Failure) -> Outcome? {
    guard let found = found(try bus.calls([searching(attributes)])[0]) else { return nil }
    let unlocked = found.unlocked
    let searched = Outcome.searched(unlocked: unlocked, locked: found.locked)
    guard found.locked.isEmpty, !unlocked.isEmpty else { return searched }
    // The session is asked for alone, once the search has answered, and only when there
    // is something to read in it. gnome-keyring (42.1 to 50.0 at least) aborts when it
    // handles an `OpenSession` whose caller has left the bus in the meantime (its client
    // record is freed on `NameOwnerChanged` before the queued call runs: `g_variant_new`
    // on a NULL session). A call queued behind the search widened that window to the
    // search's time; a client killed in it took the user's keyring daemon down, and it
    // came back locked. `KeyringCallsTests` checks the order on the bus. (Nor can it go
    // first, before the search, as libsecret's first call: it is then a new client's
    // first call, and four loops killing `tokenctl token` 1–9 ms in took gnome-keyring
    // 42.1 down within 12 s, where the order here ran 60 s and 150 s with it up.)
    var session: String?
    if secrets {
      guard let path = try openSession(bus, algorithm: algorithm) else { return searched }
      session = path
    }
    // Closed by the last write of an ordinary read, else here (see `close(_:on:)`); not
    // after a timeout, which it would wait out again.
    var open = session
    defer { close(open, on: bus) }
    let properties = properties(unlocked.count)
    var items = unlocked.map { Item(path: $0, attributes: [:], modified: 0, secret: nil) }
    for start in stride(from: 0, to: items.count, by: callsAtOnce) {
      let chunk = start..<min(start + callsAtOnce, items.count)
      var calls: [DBusWireConnection.Call] = []
      if let session {
        let paths = items[chunk].map(\.path)
        calls.append(
          serviceCall("GetSecrets", signature: "aoo") { body in
            body.array(elementAlignment: 4) { array in for path in paths { array.string(path) } }
            body.string(session)
          })
      }
      if properties {
        for item in items[chunk] { calls.append(Self.allProperties(of: item.path)) }
      }
      // The session closes with the last write, its reply dropped.
      let last = chunk.upperBound == items.count
      if last, let session { calls.append(closing(session)) }
      var replies: [DBusMessage]
      do {
        replies = try bus.calls(calls)
      } catch .timedOut {
        open = nil
        return .noAnswer
      } catch {
        return searched
      }
      if last, session != nil {
        replies.removeLast()
        open = nil
      }
      if let session {
        guard Self.read(secrets: replies.removeFirst(), session: session, into: &items[chunk]) else { return searched }
      }
      // One `GetAll` reply per item, in order (no `zip`: see DBusValue.forEachEntry).
      for offset in replies.indices {
        guard Self.read(properties: replies[offset], into: &items[chunk.lowerBound + offset]) else {
          return searched
        }
      }
    }
    return .read(items)
  }

  /// Reads `GetSecrets`' answer, `a{o(oayays)}`, into `items`; false when an item has no
  /// secret in it, or one came in another session or with parameters, which a plain
  /// session has none of (the path names another session: GDBus's read sorts it out).
  private static func read(secrets reply: DBusMessage, session: String, into items: inout ArraySlice<Item>) -> Bool {
    var valid = true
    let dictionary = returned(reply)?.first?.forEachEntry { path, value in
      guard let secret = value.fields, secret.count == 4, secret[0].string == session,
        case .bytes(let parameters) = secret[1], parameters.isEmpty, case .bytes(let bytes) = secret[2],
        let index = items.firstIndex(where: { $0.path == path })
      else {
        valid = false
        return
      }
      items[index].secret = bytes
    }
    // Every item found must come with its secret.
    return dictionary == true && valid && items.allSatisfy { $0.secret != nil }
  }

  /// Reads a `GetAll` answer, `a{sv}`, into `item`: its `Attributes` (`a{ss}`) and
  /// `Modified` (`t`); false when the attributes are not there as such.
  static func read(properties reply: DBusMessage, into item: inout Item) -> Bool {
    guard let properties = returned(reply)?.first, let attributes = properties.entry("Attributes")?.unwrapped
    else { return false }
    var valid = true
    let dictionary = attributes.forEachEntry { key, value in
      guard let text = value.string else {
        valid = false
        return
      }
      item.attributes[key] = text
    }
    if case .integer(let modified) = properties.entry("Modified")?.unwrapped { item.modified = modified }
    return dictionary && valid
  }

  /// Closes the session at `path`, if any, and waits for the answer, whatever it is.
  ///
  /// Why a session is closed rather than left to end with the connection: a reader leaves
  /// nothing for gnome-keyring to clean up when the bus says it left, the path on which
  /// the daemon has its bugs (see `read`: the crash first blamed on it was the queued
  /// `OpenSession`'s).
  static func close(_ path: String?, on bus: DBusWireConnection) {
    guard let path else { return }
    _ = try? bus.calls([closing(path)])
  }

  /// `org.freedesktop.Secret.Session.Close` of the session at `path`.
  static func closing(_ path: String) -> DBusWireConnection.Call {
    .init(destination: serviceName, path: path, interface: "org.freedesktop.Secret.Session", member: "Close")
  }

  /// A method return's body; nil for an error.
  static func returned(_ reply: DBusMessage) -> [DBusValue]? {
    reply.kind == .methodReturn ? reply.body : nil
  }

  /// `SearchItems` for the items whose attributes include `attributes`.
  static func searching(_ attributes: [String: String]) -> DBusWireConnection.Call {
    serviceCall("SearchItems", signature: "a{ss}") { $0.stringDictionary(attributes) }
  }

  /// Opens a session of `algorithm`, alone on the connection (see `read`: gnome-keyring's
  /// `OpenSession`); its path, nil when the service refuses it.
  static func openSession(_ bus: DBusWireConnection, algorithm: String) throws(DBusWireConnection.Failure) -> String? {
    let opening = serviceCall("OpenSession", signature: "sv") {
      $0.string(algorithm)
      $0.variant(string: "")
    }
    guard let opened = returned(try bus.calls([opening])[0]), opened.count == 2 else { return nil }
    return opened[1].string
  }

  /// `org.freedesktop.DBus.Properties.GetAll` of the item at `path`.
  static func allProperties(of path: String) -> DBusWireConnection.Call {
    .init(
      destination: serviceName, path: path, interface: "org.freedesktop.DBus.Properties", member: "GetAll",
      signature: "s", arguments: { $0.string(itemInterface) })
  }

  static func serviceCall(
    _ member: String, signature: String, _ arguments: @escaping (inout DBusWriter) -> Void
  ) -> DBusWireConnection.Call {
    .init(
      destination: serviceName, path: servicePath, interface: serviceInterface, member: member, signature: signature,
      arguments: arguments)
  }
}
