import CLibSecret

/// A failure GLib reported through a `GError`, as one Swift error: what it says, and the
/// D-Bus error name when a peer on the bus answered with an error.
public struct GLibError: Error, Sendable, Equatable, CustomStringConvertible {
  /// GLib's message. A remote error's comes without the "GDBus.Error:NAME: " prefix GDBus
  /// puts before it, as libsecret strips it, so that it reads the same whoever called.
  public var message: String
  /// The D-Bus error name of a remote error (`org.freedesktop.DBus.Error.ServiceUnknown`);
  /// nil for an error raised in this process (a timeout included).
  public var remoteName: String?

  public init(message: String, remoteName: String? = nil) {
    self.message = message
    self.remoteName = remoteName
  }

  /// The error `error` says, which this frees; "unknown error" when GLib set none.
  public init(taking error: UnsafeMutablePointer<GError>?) {
    guard let error else {
      self.init(message: "unknown error")
      return
    }
    defer { tokenctl_g_error_free(error) }
    // The name first: for an error GDBus did not map to a GError of its own, it is read
    // from the prefix that stripping removes.
    let remoteName = Self.remoteErrorName(of: error)
    _ = tokenctl_g_dbus_error_strip_remote_error(error)
    self.init(message: GLib.message(error), remoteName: remoteName)
  }

  /// The D-Bus error name `error` carries (a remote error's), nil for one raised in this
  /// process. Read it before stripping the message: only the errors GDBus maps to a
  /// `GError` of their own (`G_DBUS_ERROR`'s, registered domains') keep it afterwards.
  public static func remoteErrorName(of error: UnsafeMutablePointer<GError>) -> String? {
    tokenctl_g_dbus_error_get_remote_error(error).map(GLib.takeString)
  }

  public var description: String { message }
}
