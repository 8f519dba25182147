import CLibSecret

/// GLib itself, for the two users of GDBus in tokenctl (the keyring's reads and monitor,
/// the agent's D-Bus front end): loading it, and the few conversions of its C types every
/// caller needs.
public enum GLib {
  /// Loads GIO (with GObject and GLib) on first use; throws why it cannot be. Only GIO:
  /// D-Bus needs nothing of libsecret, and leaving libsecret (and libgcrypt with it)
  /// unloaded keeps them out of a process until it writes to the keyring.
  public static func load() throws(GLibError) {
    if let loadFailure { throw GLibError(message: loadFailure) }
  }

  /// Why GIO could not be loaded, or nil once it is (`tokenctl_gio_load`).
  private static let loadFailure: String? = tokenctl_gio_load().map { String(cString: $0) }

  /// The message of a `GError`.
  public static func message(_ error: UnsafeMutablePointer<GError>) -> String {
    error.pointee.message.map { String(cString: $0) } ?? "unknown error"
  }

  /// A string GLib allocated, which this frees.
  public static func takeString(_ string: UnsafeMutablePointer<gchar>) -> String {
    defer { tokenctl_g_free(string) }
    return String(cString: string)
  }

  /// Drops a reference to a `GObject`.
  public static func unref(_ object: OpaquePointer) { tokenctl_g_object_unref(UnsafeMutableRawPointer(object)) }
}
