import CLibSecret
import CLinux
import Synchronization
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
  private let session: Session
  /// The monitor's thread (a `GThread`), until `stop()` takes it.
  private let thread: Mutex<OpaquePointer?>

  /// Starts watching the session bus's Secret Service; `onChange` is called (on the
  /// monitor's own thread) after any item is created, changed or deleted in any
  /// collection, a collection is created/deleted/changed or (un)locked, or the service's
  /// owner changes (daemon restart or exit).
  ///
  /// When this returns, the bus applies the monitor's match rules: a change made after it
  /// returns is reported. Throws `keyringUnavailable` when libsecret (and GLib with it)
  /// cannot be loaded or there is no session bus; no Secret Service need be running yet.
  public init(onChange: @escaping @Sendable (KeyringChange) -> Void) throws {
    try GLibBridge.requireLibsecret()
    var error: UnsafeMutablePointer<GError>? = nil
    guard let bus = tokenctl_g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
      throw SecretServiceError.noSessionBus(Self.take(error))
    }
    let session = Session(bus: bus, onChange: onChange)
    do {
      try session.awaitMatchRules()
      let retained = Unmanaged.passRetained(session)
      guard
        let thread = tokenctl_g_thread_try_new(
          "keyring-monitor",
          { data in
            Unmanaged<Session>.fromOpaque(data!).takeRetainedValue().run()
            return nil
          }, retained.toOpaque(), &error)
      else {
        retained.release()
        throw TokenKitError(.storeFailure, "cannot start the keyring monitor's thread: \(Self.take(error))")
      }
      self.session = session
      self.thread = Mutex(thread)
    } catch {
      session.unsubscribe()
      throw error
    }
  }

  /// Stops watching: no `onChange` call starts after this returns, and the monitor's
  /// thread has ended (unless this is called from `onChange` itself, on that thread, which
  /// then ends as soon as `onChange` returns). Calling it again does nothing.
  public func stop() {
    // Under the lock, so that a second, concurrent `stop()` returns only once the first
    // has silenced `onChange`.
    let taken = thread.withLock { thread in
      defer { thread = nil }
      if thread != nil { session.requestStop() }
      return thread
    }
    guard let thread = taken else { return }
    if thread == tokenctl_g_thread_self() {
      tokenctl_g_thread_unref(thread)
    } else {
      _ = tokenctl_g_thread_join(thread)
    }
  }

  deinit { stop() }

  /// The message of a `GError`, which this frees.
  private static func take(_ error: UnsafeMutablePointer<GError>?) -> String {
    guard let error else { return "unknown error" }
    defer { tokenctl_g_error_free(error) }
    return GLibBridge.message(error)
  }

  /// What the monitor's thread works with: the bus, the subscriptions to the Secret
  /// Service's signals, and the main context they are delivered to.
  ///
  /// Unchecked `Sendable`: it is made on the thread that creates the monitor and then
  /// used on the monitor's thread, except for `requestStop()`, which only sets an atomic
  /// flag and attaches a source to the context (both safe from any thread, in GLib's
  /// words), and `unsubscribe()` when the thread never started.
  private final class Session: @unchecked Sendable {
    let bus: OpaquePointer
    let context: OpaquePointer
    let loop: OpaquePointer
    let onChange: @Sendable (KeyringChange) -> Void
    /// Set by `requestStop()`; signals that arrive afterwards are ignored.
    let stopped = Atomic(false)
    private var subscriptions: [guint] = []

    /// Subscribes to the signals, delivered to a new main context, which nothing runs
    /// until `run()`. Takes over the reference to `bus`.
    init(bus: OpaquePointer, onChange: @escaping @Sendable (KeyringChange) -> Void) {
      self.bus = bus
      self.onChange = onChange
      context = tokenctl_g_main_context_new()
      loop = tokenctl_g_main_loop_new(context, 0)
      // GDBus delivers a subscription's signals to the thread-default main context of
      // the thread that subscribed: ours, for the time of these calls.
      tokenctl_g_main_context_push_thread_default(context)
      defer { tokenctl_g_main_context_pop_thread_default(context) }
      let me = Unmanaged.passUnretained(self).toOpaque()
      // A well-known sender name: GDBus delivers only what its current owner sends, and
      // follows the name from one daemon to the next.
      let secrets = "org.freedesktop.secrets"
      subscriptions = [
        // ItemCreated, ItemDeleted, ItemChanged, of every collection.
        tokenctl_g_dbus_connection_signal_subscribe(
          bus, secrets, "org.freedesktop.Secret.Collection", nil, nil, nil, G_DBUS_SIGNAL_FLAGS_NONE,
          Self.deliver, me, nil),
        // CollectionCreated, CollectionDeleted, CollectionChanged.
        tokenctl_g_dbus_connection_signal_subscribe(
          bus, secrets, "org.freedesktop.Secret.Service", nil, "/org/freedesktop/secrets", nil,
          G_DBUS_SIGNAL_FLAGS_NONE, Self.deliver, me, nil),
        // A collection's properties, among them Locked: the only signal that says a
        // collection was locked or unlocked.
        tokenctl_g_dbus_connection_signal_subscribe(
          bus, secrets, "org.freedesktop.DBus.Properties", "PropertiesChanged", nil,
          "org.freedesktop.Secret.Collection", G_DBUS_SIGNAL_FLAGS_NONE, Self.deliver, me, nil),
        // The daemon leaving or joining the bus.
        tokenctl_g_dbus_connection_signal_subscribe(
          bus, "org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged", "/org/freedesktop/DBus",
          secrets, G_DBUS_SIGNAL_FLAGS_NONE, Self.deliver, me, nil),
      ]
    }

    deinit {
      tokenctl_g_main_loop_unref(loop)
      tokenctl_g_main_context_unref(context)
      tokenctl_g_object_unref(UnsafeMutableRawPointer(bus))
    }

    /// Returns once the bus has applied the subscriptions' match rules. GDBus sends
    /// AddMatch without waiting for its reply; the bus handles one connection's messages
    /// in order, so the reply to any later call means the rules are in place.
    func awaitMatchRules() throws {
      var error: UnsafeMutablePointer<GError>? = nil
      guard
        let reply = tokenctl_g_dbus_connection_call_sync(
          bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId", nil, nil,
          G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
      else { throw SecretServiceError.noSessionBus(KeyringChangeMonitor.take(error)) }
      tokenctl_g_variant_unref(reply)
    }

    /// The monitor thread's name.
    static let threadName = "keyring-monitor"

    /// The monitor's thread: runs the main loop until `requestStop()`, then unsubscribes.
    func run() {
      // Named, so that what wakes it (another program writing the keyring) can be told
      // apart from the wake-ups of an idle agent's own (`ps -L`, /proc/PID/task/*/comm).
      _ = tokenctl_set_thread_name(Self.threadName)
      tokenctl_g_main_context_push_thread_default(context)
      tokenctl_g_main_loop_run(loop)
      tokenctl_g_main_context_pop_thread_default(context)
      unsubscribe()
    }

    /// Ends the subscriptions, and drops the signals that arrived for them but were not
    /// delivered: GDBus skips those of a subscription that has ended, and until they are
    /// dispatched they would keep the context alive.
    func unsubscribe() {
      for subscription in subscriptions { tokenctl_g_dbus_connection_signal_unsubscribe(bus, subscription) }
      subscriptions = []
      while tokenctl_g_main_context_iteration(context, 0) != 0 {}
    }

    /// Makes `run()` return, from any thread. Quitting through a source of the context,
    /// rather than `g_main_loop_quit` here, works even before the loop started running:
    /// `g_main_loop_run` would forget an earlier quit.
    func requestStop() {
      stopped.store(true, ordering: .releasing)
      let source = tokenctl_g_idle_source_new()
      tokenctl_g_source_set_callback(
        source,
        { data in
          tokenctl_g_main_loop_quit(OpaquePointer(data))
          return 0  // G_SOURCE_REMOVE
        }, UnsafeMutableRawPointer(loop), nil)
      _ = tokenctl_g_source_attach(source, context)
      tokenctl_g_source_unref(source)
    }

    /// GDBus's callback for every subscription, on the monitor's thread.
    private static let deliver: GDBusSignalCallback = { _, _, _, interface, member, parameters, data in
      let session = Unmanaged<Session>.fromOpaque(data!).takeUnretainedValue()
      guard !session.stopped.load(ordering: .acquiring), let interface, let member else { return }
      let name = String(cString: member)
      let properties = name == "PropertiesChanged" ? parameters.map(Session.propertyNames) ?? [] : []
      let item = name.hasPrefix("Item") ? parameters.flatMap(Session.objectPath) : nil
      guard
        let change = KeyringChange(
          interface: String(cString: interface), member: name, properties: properties, item: item)
      else { return }
      session.onChange(change)
    }

    /// The object path an item signal carries: its parameters are (o).
    private static func objectPath(_ parameters: OpaquePointer) -> String? {
      guard String(cString: tokenctl_g_variant_get_type_string(parameters)) == "(o)" else { return nil }
      return string(tokenctl_g_variant_get_child_value(parameters, 0)!)
    }

    /// The names of the properties a `PropertiesChanged` signal lists, changed or
    /// invalidated: its parameters are (interface, {name: value}, [name]).
    private static func propertyNames(_ parameters: OpaquePointer) -> [String] {
      guard String(cString: tokenctl_g_variant_get_type_string(parameters)) == "(sa{sv}as)" else { return [] }
      var names: [String] = []
      let changed = tokenctl_g_variant_get_child_value(parameters, 1)!
      defer { tokenctl_g_variant_unref(changed) }
      for index in 0..<tokenctl_g_variant_n_children(changed) {
        let entry = tokenctl_g_variant_get_child_value(changed, index)!
        defer { tokenctl_g_variant_unref(entry) }
        names.append(string(tokenctl_g_variant_get_child_value(entry, 0)!))
      }
      let invalidated = tokenctl_g_variant_get_child_value(parameters, 2)!
      defer { tokenctl_g_variant_unref(invalidated) }
      for index in 0..<tokenctl_g_variant_n_children(invalidated) {
        names.append(string(tokenctl_g_variant_get_child_value(invalidated, index)!))
      }
      return names
    }

    /// The string a `GVariant` of type `s` holds; this releases the variant.
    private static func string(_ variant: OpaquePointer) -> String {
      defer { tokenctl_g_variant_unref(variant) }
      return String(cString: tokenctl_g_variant_get_string(variant, nil))
    }
  }
}
