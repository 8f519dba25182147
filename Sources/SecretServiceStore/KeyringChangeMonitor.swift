import GLibBus
import TokenKit

/// Tells a long-lived process when the keyring changed behind its back, so that it can
/// drop what it read from it: another process saved, changed or deleted an item, a
/// collection was created, deleted, locked or unlocked, or the Secret Service's daemon
/// restarted or exited.
///
/// It listens to the Secret Service's D-Bus signals on the session bus, which
/// gnome-keyring sends for every change whoever makes it; it never polls. The signals
/// arrive on a thread of the monitor's own, which runs a GLib main loop on a main context
/// of its own, so that neither Swift's cooperative pool nor any other GLib user of the
/// process has to run one; `onChange` is called on that thread, one call at a time, and
/// should return quickly.
///
/// Signals say that something changed, not what: one change is often reported more than
/// once (`KeyringChange`), and a reader should treat every call as "read again".
public final class KeyringChangeMonitor: Sendable {
  /// The loop the signals are delivered to, on the monitor's own thread.
  private let loop: MainLoopThread

  /// The monitor thread's name.
  static let threadName = "keyring-monitor"

  /// Starts watching the session bus's Secret Service; `onChange` is called (on the
  /// monitor's own thread) after any item is created, changed or deleted in any
  /// collection, a collection is created/deleted/changed or (un)locked, or the service's
  /// owner changes (daemon restart or exit).
  ///
  /// When this returns, the bus applies the monitor's match rules: a change made after it
  /// returns is reported. Throws `keyringUnavailable` when GLib cannot be loaded or there
  /// is no session bus; no Secret Service need be running yet.
  public init(onChange: @escaping @Sendable (KeyringChange) -> Void) throws {
    try GLibBridge.requireGIO()
    let bus = try SecretServiceBus.session()
    // The loop's subscriptions keep the connection as long as they need it.
    defer { bus.release() }
    // Named, so that what wakes it (another program writing the keyring) can be told
    // apart from the wake-ups of an idle agent's own (`ps -L`, /proc/PID/task/*/comm).
    loop = MainLoopThread(name: Self.threadName)
    Self.subscribe(loop, on: bus, onChange)
    do {
      try Self.awaitMatchRules(bus)
    } catch {
      throw SecretServiceError.noSessionBus(error.message)
    }
    do {
      try loop.start()
    } catch {
      throw TokenKitError(.internalFailure, "cannot start the keyring monitor's thread: \(error.message)")
    }
  }

  /// Stops watching: no `onChange` call starts after this returns, and the monitor's
  /// thread has ended (unless this is called from `onChange` itself, on that thread, which
  /// then ends as soon as `onChange` returns). Calling it again does nothing.
  public func stop() { loop.stop() }

  deinit { stop() }

  /// Subscribes to the Secret Service's signals, delivered to the loop.
  private static func subscribe(
    _ loop: MainLoopThread, on bus: DBusConnection, _ onChange: @escaping @Sendable (KeyringChange) -> Void
  ) {
    let deliver: @Sendable (DBusSignal) -> Void = { signal in
      if let change = change(signal) { onChange(change) }
    }
    // A well-known sender name: GDBus delivers only what its current owner sends, and
    // follows the name from one daemon to the next.
    let secrets = "org.freedesktop.secrets"
    // ItemCreated, ItemDeleted, ItemChanged, of every collection.
    loop.subscribe(
      on: bus, sender: secrets, interface: "org.freedesktop.Secret.Collection", member: nil, path: nil, deliver)
    // CollectionCreated, CollectionDeleted, CollectionChanged.
    loop.subscribe(
      on: bus, sender: secrets, interface: "org.freedesktop.Secret.Service", member: nil,
      path: "/org/freedesktop/secrets", deliver)
    // A collection's properties, among them Locked: the only signal that says a
    // collection was locked or unlocked. Only their names are read (the body, its
    // dictionary, each entry, each value's variant): the values are not needed, and one
    // of them, with every write to the collection, is the path of each of its items,
    // thousands in a large keyring, which another program's import sends once per item.
    loop.subscribe(
      on: bus, sender: secrets, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: nil,
      arg0: "org.freedesktop.Secret.Collection", depth: Self.propertiesChangedDepth, deliver)
    // The daemon leaving or joining the bus.
    loop.subscribe(
      on: bus, sender: DBusConnection.busName, interface: DBusConnection.busName, member: "NameOwnerChanged",
      path: DBusConnection.busPath, arg0: secrets, deliver)
  }

  /// How much of a `PropertiesChanged` is read: its body (1), the dictionary of changed
  /// properties and the invalidated names (2), each entry (3), each value's variant (4);
  /// not what a variant holds.
  static let propertiesChangedDepth = 4

  /// Returns once the bus has applied the subscriptions' match rules. GDBus sends
  /// AddMatch without waiting for its reply; the bus handles one connection's messages
  /// in order, so the reply to any later call means the rules are in place.
  private static func awaitMatchRules(_ bus: DBusConnection) throws(GLibError) {
    _ = try bus.callBus("GetId", nil, replyType: nil)
  }

  /// The change `signal` announces, if any: an item signal's body is (o), the object
  /// path of the item; a `PropertiesChanged`'s is (interface, {name: value}, [name]),
  /// whose names, changed or invalidated, say whether the lock state changed.
  static func change(_ signal: DBusSignal) -> KeyringChange? {
    guard case .tuple(let body) = signal.body else { return nil }
    var properties: [String] = []
    var item: String?
    if signal.member.hasPrefix("Item"), body.count == 1, case .objectPath(let path) = body[0] {
      item = path
    }
    if signal.member == "PropertiesChanged", body.count == 3, case .string = body[0],
      case .dictionary(let changed) = body[1], case .strings(let invalidated) = body[2]
    {
      properties = changed.map(\.0) + invalidated
    }
    return KeyringChange(interface: signal.interface, member: signal.member, properties: properties, item: item)
  }
}
