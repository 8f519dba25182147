import CLibSecret

/// A GDBus connection: the session bus, method calls with a timeout, signals sent, and
/// subscriptions to the signals of others.
///
/// Borrowed: a value does not own a reference to the connection, except the one
/// ``session()`` returns, which ``release()`` drops. GDBus connections may be used from
/// any thread.
public struct DBusConnection: @unchecked Sendable {
  public let pointer: OpaquePointer

  public init(pointer: OpaquePointer) { self.pointer = pointer }

  /// The bus daemon's own name, object and interface.
  public static let busName = "org.freedesktop.DBus"
  public static let busPath = "/org/freedesktop/DBus"

  /// GDBus's default, 25 s, for `timeout`.
  public static let defaultTimeout: Int32 = -1

  /// The session bus, with a reference the caller drops with ``release()``. GLib shares
  /// one connection per process and holds it only weakly: the reference keeps it for the
  /// caller's calls. Call ``GLib/load()`` first.
  public static func session() throws(GLibError) -> DBusConnection {
    var error: UnsafeMutablePointer<GError>? = nil
    guard let connection = tokenctl_g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
      throw GLibError(taking: error)
    }
    return DBusConnection(pointer: connection)
  }

  /// Drops the reference ``session()`` gave.
  public func release() { GLib.unref(pointer) }

  /// Calls `method` and waits for its reply, of type `replyType` (nil: any), at most
  /// `timeout` milliseconds; the reply's `GVariant`, which the caller frees, or nil with
  /// the `GError` in `error`, for a caller that tells errors apart by their `GError`.
  /// `destination` nil on a peer-to-peer connection; `autoStart` false: a service not
  /// running is not started for the call.
  public func call(
    _ destination: String?, _ path: String, _ interface: String, _ method: String, _ parameters: OpaquePointer?,
    replyType: String?, autoStart: Bool = true, timeout: Int32 = defaultTimeout,
    error: UnsafeMutablePointer<UnsafeMutablePointer<GError>?>
  ) -> OpaquePointer? {
    let flags = autoStart ? G_DBUS_CALL_FLAGS_NONE : G_DBUS_CALL_FLAGS_NO_AUTO_START
    return Self.withOptionalCString(replyType) { type in
      tokenctl_g_dbus_connection_call_sync(
        pointer, destination, path, interface, method, parameters, type.map { OpaquePointer($0) }, flags, timeout,
        nil, error)
    }
  }

  /// Calls `method` with `parameters` (a tuple, or nil for none) and returns its reply (a
  /// tuple); throws what GLib reported, the peer's D-Bus error included.
  public func call(
    _ destination: String?, _ path: String, _ interface: String, _ method: String, _ parameters: BusValue?,
    replyType: String?, autoStart: Bool = true, timeout: Int32 = defaultTimeout
  ) throws(GLibError) -> BusValue {
    var error: UnsafeMutablePointer<GError>? = nil
    guard
      let reply = call(
        destination, path, interface, method, parameters?.variant(), replyType: replyType, autoStart: autoStart,
        timeout: timeout, error: &error)
    else { throw GLibError(taking: error) }
    defer { tokenctl_g_variant_unref(reply) }
    return BusValue(reading: reply)
  }

  /// A method of the bus daemon itself (`org.freedesktop.DBus`).
  public func callBus(
    _ method: String, _ parameters: BusValue?, replyType: String?, timeout: Int32 = defaultTimeout
  ) throws(GLibError) -> BusValue {
    try call(
      Self.busName, Self.busPath, Self.busName, method, parameters, replyType: replyType, timeout: timeout)
  }

  /// Emits `signal` of `interface` at `path`, `body` its tuple: to `destination` alone
  /// (a unicast signal), or broadcast when nil.
  public func emit(
    _ signal: String, of interface: String, at path: String, _ body: BusValue, to destination: String?
  ) throws(GLibError) {
    var error: UnsafeMutablePointer<GError>? = nil
    guard
      tokenctl_g_dbus_connection_emit_signal(pointer, destination, path, interface, signal, body.variant(), &error) != 0
    else { throw GLibError(taking: error) }
  }

  private static func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
  }
}
