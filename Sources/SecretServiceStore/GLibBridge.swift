import CLibSecret
import GLibBus
import TokenKit

/// Small conversions between libsecret's C types and Swift's, kept in one place so the
/// store reads as Secret Service calls and not as pointer juggling; GLib's own, and D-Bus,
/// are the `GLibBus` layer's.
enum GLibBridge {
  /// Loads libsecret (and GLib with it) on first use; every entry point of this module
  /// that calls libsecret calls it before any other function of CLibSecret.
  static func requireLibsecret() throws {
    if let loadFailure { throw SecretServiceError.libsecretMissing(loadFailure) }
  }

  /// Loads GIO (and GLib) on first use, for the entry points that call GLib and GIO only
  /// (the keyring's read paths), which leave libsecret and libgcrypt unloaded.
  static func requireGIO() throws {
    do {
      try GLib.load()
    } catch {
      throw SecretServiceError.libsecretMissing(error.message)
    }
  }

  /// Why libsecret could not be loaded, or nil once it is. Loading on the first keyring
  /// operation, not at start-up, keeps GLib and libgcrypt out of the processes that never
  /// reach the keyring.
  private static let loadFailure: String? = tokenctl_libsecret_load().map { String(cString: $0) }

  /// A new `GHashTable` of strings that owns copies of `dictionary`; free with
  /// `g_hash_table_unref`.
  static func hashTable(_ dictionary: [String: String]) -> OpaquePointer {
    let table = tokenctl_g_hash_table_new_strings()!
    for (key, value) in dictionary {
      _ = tokenctl_g_hash_table_insert(table, tokenctl_g_strdup(key), tokenctl_g_strdup(value))
    }
    return table
  }

  /// The contents of a `GHashTable` of strings.
  static func dictionary(_ table: OpaquePointer) -> [String: String] {
    var result: [String: String] = [:]
    var iterator = GHashTableIter()
    tokenctl_g_hash_table_iter_init(&iterator, table)
    var key: gpointer? = nil
    var value: gpointer? = nil
    while tokenctl_g_hash_table_iter_next(&iterator, &key, &value) != 0 {
      guard let key, let value else { continue }
      result[String(cString: key.assumingMemoryBound(to: CChar.self))] =
        String(cString: value.assumingMemoryBound(to: CChar.self))
    }
    return result
  }

  /// The elements of a `GList` of objects, which this frees (the objects are handed over
  /// to the caller, who must `unref` each one).
  static func takeObjects(_ list: UnsafeMutablePointer<GList>?) -> [OpaquePointer] {
    var objects: [OpaquePointer] = []
    var node = list
    while let current = node {
      if let data = current.pointee.data { objects.append(OpaquePointer(data)) }
      node = current.pointee.next
    }
    tokenctl_g_list_free(list)
    return objects
  }

  /// Runs a libsecret/GIO call that reports failure through a `GError**`, turning a
  /// failure into a `TokenKitError` that says what to do, or into `StaleSecretService`
  /// when the Secret Service that libsecret remembers has gone away, or refuses its
  /// session (``SessionRefusal``).
  static func call<R>(
    _ what: String, _ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> R?
  ) throws -> R? {
    var error: UnsafeMutablePointer<GError>? = nil
    let result = body(&error)
    if let error {
      defer { tokenctl_g_error_free(error) }
      // The D-Bus error name first: stripping the message's "GDBus.Error:NAME: " prefix
      // (as libsecret does after its own calls, so messages read the same) loses it for
      // the names no GError is registered for, the Secret Service's own when libsecret is
      // not loaded (the read path).
      let remote = GLibError.remoteErrorName(of: error)
      _ = tokenctl_g_dbus_error_strip_remote_error(error)
      let failure = SecretServiceError.classify(error, remoteName: remote, during: what)
      if SecretServiceError.serviceWentAway(remoteName: remote)
        || SessionRefusal.refuses(remoteName: remote, message: GLib.message(error))
      {
        throw StaleSecretService(error: failure)
      }
      throw failure
    }
    return result
  }
}
