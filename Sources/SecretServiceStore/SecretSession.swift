import CLibSecret
import Synchronization
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The Secret Service session the store reads secrets in, and why it is `plain` on the
/// session bus (tokenctl-keyring(5), "Sessions").
///
/// A session decides only how a secret travels between the provider and us. With `plain`
/// it is in the clear inside the D-Bus messages; with libsecret's Diffie-Hellman session
/// (`dh-ietf1024-sha256-aes128-cbc-pkcs7`) it is AES-encrypted under a key the two ends
/// agree on, unauthenticated. On the session bus, the only parties that could read the
/// messages in between are the bus daemon and a bus monitor, and both are the user's own:
/// the bus admits connections of its user only, and only that user or root may become a
/// monitor (or eavesdrop). Any process of the user can also call `GetSecrets` itself and
/// get every unlocked secret, since the Secret Service has no per-application isolation,
/// and root can read any memory. So DH hides a secret from nobody who could not ask for
/// it anyway, while it costs the provider ~5 ms of CPU per `OpenSession` (gnome-keyring,
/// against 0.3 ms for `plain`) and most of a libsecret reader's instructions.
///
/// DH buys something where the messages leave the user's machine: a session bus over
/// TCP (`tcp:` or `nonce-tcp:` in `DBUS_SESSION_BUS_ADDRESS`), where anyone on the path
/// could read them. There, and wherever a provider refuses `plain`, reads go through
/// libsecret and its DH session. Writes do too, but for the replacement of an item in
/// place, which goes in a plain session where reads do (see `SecretServiceTokenStore.put`).
enum SecretSession {
  /// A plain session at this object path: read with `GetSecrets`.
  case plain(path: String)
  /// Read through libsecret, which opens its DH session.
  case libsecret

  /// The algorithm the spec names for a session without encryption.
  static let plainAlgorithm = "plain"

  /// The algorithm reads should use on the session bus at `address`
  /// (`DBUS_SESSION_BUS_ADDRESS`): nil for libsecret's DH, where the bus is reached over
  /// TCP; `plain` otherwise (GLib's default, `$XDG_RUNTIME_DIR/bus`, is a Unix socket).
  static func readAlgorithm(busAddress address: String?) -> String? {
    // A D-Bus address is a `;`-separated list of `transport:key=value,…` entries.
    let transports = (address ?? "").split(separator: ";").map { $0.prefix { $0 != ":" } }
    return transports.contains { $0 == "tcp" || $0 == "nonce-tcp" } ? nil : plainAlgorithm
  }

  /// The session to read secrets in on `bus`, opened with `algorithm` (nil: the rule of
  /// `readAlgorithm(busAddress:)`) on first use and kept as long as the connection, as the
  /// provider keeps it; `isNew` when this call opened it. `.libsecret` when the algorithm
  /// is DH's, or the provider refuses it (`org.freedesktop.DBus.Error.NotSupported`).
  static func open(
    on bus: SecretServiceBus, algorithm: String? = nil, timeout: Int32
  ) throws -> (session: SecretSession, isNew: Bool) {
    let algorithm =
      algorithm ?? readAlgorithm(busAddress: getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) })
    guard let algorithm else { return (.libsecret, false) }
    let key = cacheKey(algorithm)
    let object = bus.connection
    return try opening.withLock { _ in
      if let cached = tokenctl_g_object_get_data(object, key) {
        let path = String(cString: cached.assumingMemoryBound(to: CChar.self))
        return (path.isEmpty ? .libsecret : .plain(path: path), false)
      }
      let path = try bus.openSession(algorithm: algorithm, timeout: timeout) ?? ""
      // An empty path stands for "refused", so that a provider is asked once.
      tokenctl_g_object_set_data_full(object, key, tokenctl_g_strdup(path), tokenctl_g_free)
      return (path.isEmpty ? .libsecret : .plain(path: path), true)
    }
  }

  /// Forgets the session `open` keeps for `algorithm` on `bus`, which the provider no
  /// longer knows (it restarted): the next `open` opens another.
  static func forget(on bus: SecretServiceBus, algorithm: String? = nil) {
    let algorithm =
      algorithm ?? readAlgorithm(busAddress: getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) })
    guard let algorithm else { return }
    opening.withLock { _ in tokenctl_g_object_set_data_full(bus.connection, cacheKey(algorithm), nil, nil) }
  }

  private static func cacheKey(_ algorithm: String) -> String { "tokenctl-secret-session-\(algorithm)" }

  /// Held while a session is looked up or opened, so that threads reading at once open one
  /// session per connection and never read a cached path while another thread frees it.
  private static let opening = Mutex(())
}
