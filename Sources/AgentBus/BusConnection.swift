import CLibSecret

/// A GDBus connection, for the agent's synchronous calls from any thread: to the bus
/// daemon, and to the notification server.
struct BusConnection: @unchecked Sendable {
  let pointer: OpaquePointer

  /// Calls `method` and waits (5 s at most) for the reply tuple, which the caller frees;
  /// nil when the call failed. `autoStart` false: a service not running is not started.
  func call(
    _ destination: String, _ path: String, _ interface: String, _ method: String, _ parameters: BusValue,
    replyType: String?, autoStart: Bool = true
  ) -> OpaquePointer? {
    var error: UnsafeMutablePointer<GError>? = nil
    let flags = autoStart ? G_DBUS_CALL_FLAGS_NONE : G_DBUS_CALL_FLAGS_NO_AUTO_START
    let reply = withOptionalCString(replyType) { type in
      tokenctl_g_dbus_connection_call_sync(
        pointer, destination, path, interface, method, parameters.variant(), type.map { OpaquePointer($0) }, flags,
        5000, nil, &error)
    }
    if let error { tokenctl_g_error_free(error) }
    return reply
  }

  /// A method of the bus daemon itself (`org.freedesktop.DBus`).
  func callBus(_ method: String, _ parameters: BusValue, replyType: String) -> OpaquePointer? {
    call(
      "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method, parameters,
      replyType: replyType)
  }

  /// What `read` makes of the first value of `reply`, which this frees.
  static func first<Result>(of reply: OpaquePointer, _ read: (OpaquePointer) -> Result) -> Result {
    defer { tokenctl_g_variant_unref(reply) }
    let child = tokenctl_g_variant_get_child_value(reply, 0)!
    defer { tokenctl_g_variant_unref(child) }
    return read(child)
  }

  private func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
  }
}
