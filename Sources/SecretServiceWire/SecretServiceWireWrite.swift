/// The Secret Service's ordinary write over ``DBusWireConnection``: an item that is there,
/// and unlocked, replaced in place (every refresh's save), with the same calls as the
/// keyring store's write through libsecret: `SearchItems` for the item, `OpenSession`
/// (`plain`), the item's `GetAll` with its `SetSecret`, then `Properties.Set` of its
/// `Attributes` and `Label` with the session's `Close`. Four round trips, the first with
/// the authentication and `Hello`.
///
/// Only that case is written here: exactly one item found, unlocked, and every call
/// answered. Anything else (nothing found, which is a creation; copies of the item to
/// remove; a locked item; an error reply; no answer in time; a bus it cannot reach) is
/// the caller's to write through libsecret, all of it, as it would have without this:
/// that write unlocks, prompts, creates, removes copies, and says what went wrong, in one
/// place. It is idempotent, so it may follow a write here that stopped partway.
public enum SecretServiceWireWrite {
  /// Replaces the secret, attributes and label of the one item whose attributes include
  /// `key`; returns its object path, or nil when it did not write all of it, or anything.
  ///
  /// - Parameters:
  ///   - secret: the new secret, sent as it is in a session of `algorithm` (the spec's
  ///     `plain`), with `contentType`.
  ///   - attributes: the attributes to set, given those the item has now.
  ///   - busAddress: `DBUS_SESSION_BUS_ADDRESS`.
  public static func replace(
    matching key: [String: String], secret: [UInt8], contentType: String,
    attributes: (_ current: [String: String]) -> [String: String], label: String, algorithm: String,
    busAddress: String?, runtimeDirectory: String?, timeoutMilliseconds: Int32
  ) -> String? {
    guard let address = DBusAddress(busAddress, runtimeDirectory: runtimeDirectory),
      let bus = DBusWireConnection(address, timeoutMilliseconds: timeoutMilliseconds)
    else { return nil }
    typealias Read = SecretServiceWireRead
    do {
      guard let found = Read.found(try bus.calls([Read.searching(key)])[0]), found.locked.isEmpty,
        found.unlocked.count == 1
      else { return nil }
      let path = found.unlocked[0]
      // Alone, once the search has answered: see SecretServiceWireRead's `read`.
      guard let session = try Read.openSession(bus, algorithm: algorithm) else { return nil }
      // Closed by the last write, else here; not after a timeout, which it would wait out
      // again.
      var open: String? = session
      defer { Read.close(open, on: bus) }
      do {
        // The secret first, so that the tokens are swapped at once and nothing else
        // changes when it is refused; the attributes then catch up. The item's attributes
        // are read in the same write: what to set depends on them, and reading changes
        // nothing.
        let swapped = try bus.calls([
          setSecret(of: path, secret, contentType: contentType, session: session), Read.allProperties(of: path),
        ])
        var item = Read.Item(path: path, attributes: [:], modified: 0, secret: nil)
        guard swapped[0].kind == .methodReturn, Read.read(properties: swapped[1], into: &item) else { return nil }
        let complete = attributes(item.attributes)
        let updated = try bus.calls([
          set(path, "Attributes", type: "a{ss}") { $0.stringDictionary(complete) },
          set(path, "Label", type: "s") { $0.string(label) }, Read.closing(session),
        ])
        open = nil
        guard updated[0].kind == .methodReturn, updated[1].kind == .methodReturn else { return nil }
        return path
      } catch .timedOut {
        open = nil
        return nil
      }
    } catch {
      return nil
    }
  }

  /// `org.freedesktop.Secret.Item.SetSecret` of the item at `path`: the secret
  /// `(o session, ay parameters, ay value, s content_type)`, a plain session's without
  /// parameters.
  private static func setSecret(
    of path: String, _ secret: [UInt8], contentType: String, session: String
  ) -> DBusWireConnection.Call {
    .init(
      destination: SecretServiceWireRead.serviceName, path: path, interface: SecretServiceWireRead.itemInterface,
      member: "SetSecret", signature: "(oayays)"
    ) { body in
      body.structure {
        $0.string(session)
        $0.byteArray([])
        $0.byteArray(secret)
        $0.string(contentType)
      }
    }
  }

  /// `org.freedesktop.DBus.Properties.Set` of the item's property `name`, a variant of
  /// `type` whose value `value` writes.
  private static func set(
    _ path: String, _ name: String, type: String, _ value: @escaping (inout DBusWriter) -> Void
  ) -> DBusWireConnection.Call {
    .init(
      destination: SecretServiceWireRead.serviceName, path: path, interface: "org.freedesktop.DBus.Properties",
      member: "Set", signature: "ssv"
    ) { body in
      body.string(SecretServiceWireRead.itemInterface)
      body.string(name)
      body.variant(type, value)
    }
  }
}
