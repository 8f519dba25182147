import CLibSecret
import GLibBus
import SecretServiceWire
import TokenKit

/// The Secret Service as the store calls it over D-Bus without libsecret: a connection
/// to the session bus and the service's bus name, with one way to call its methods.
///
/// The read paths call the service's methods themselves (`SearchItems`, `GetSecrets`,
/// `GetAll`), which libsecret would wrap in proxies: a `SecretService` and a `SecretItem`
/// per item cost seven calls more than the reads themselves (`AddMatch` ×2,
/// `StartServiceByName`, `GetNameOwner`, `GetAll`, `RemoveMatch` ×2). Calls go to the
/// well-known name, so a restarted daemon answers the next one.
struct SecretServiceBus {
  /// The session bus connection, owned by whoever made this value.
  let connection: OpaquePointer
  /// The name calls go to: `org.freedesktop.secrets`, or libsecret's for its proxy.
  let name: String

  static let serviceName = SecretServiceWireRead.serviceName
  static let servicePath = SecretServiceWireRead.servicePath
  static let serviceInterface = SecretServiceWireRead.serviceInterface
  static let itemInterface = SecretServiceWireRead.itemInterface
  static let collectionInterface = "org.freedesktop.Secret.Collection"

  /// The same bus and name as libsecret's proxy `service` (a `SecretService`, or any
  /// `GDBusProxy` of it), which keeps the connection alive.
  init(proxy service: OpaquePointer) {
    connection = tokenctl_g_dbus_proxy_get_connection(service)
    name = String(cString: tokenctl_g_dbus_proxy_get_name(service))
  }

  private init(connection: OpaquePointer) {
    self.connection = connection
    name = Self.serviceName
  }

  /// Runs `body` with the session bus, held until `body` returns: one connection for all
  /// of its calls.
  static func withSessionBus<R>(_ body: (SecretServiceBus) throws -> R) throws -> R {
    let connection = try session()
    defer { connection.release() }
    return try body(SecretServiceBus(connection: connection.pointer))
  }

  /// The session bus, which the caller releases; `noSessionBus` when there is none.
  static func session() throws -> DBusConnection {
    do {
      return try DBusConnection.session()
    } catch {
      throw SecretServiceError.noSessionBus(error.message)
    }
  }

  /// Calls `method` of `interface` at `path` and returns its reply, of type `replyType`;
  /// `timeout` in milliseconds, -1 for GDBus's default (25 s). `what` says, in errors,
  /// what the call was for.
  func call(
    _ path: String, _ interface: String, _ method: String, _ parameters: OpaquePointer?, replyType: String,
    timeout: Int32 = -1, what: String
  ) throws -> OpaquePointer {
    guard let reply = try send(path, interface, method, parameters, replyType, timeout, what, refusal: nil) else {
      throw TokenKitError(.storeFailure, "the Secret Service failed while \(what): no reply")
    }
    return reply
  }

  /// The reply of the call, or nil when the service answers with the D-Bus error named
  /// `refusal`; any other error is thrown, classified.
  private func send(
    _ path: String, _ interface: String, _ method: String, _ parameters: OpaquePointer?, _ replyType: String,
    _ timeout: Int32, _ what: String, refusal: String?
  ) throws -> OpaquePointer? {
    let reply = try GLibBridge.call(what) { error in
      let reply = DBusConnection(pointer: connection).call(
        name, path, interface, method, parameters, replyType: replyType, timeout: timeout, error: error)
      guard let failure = error.pointee else { return reply }
      if let refusal, GLibError.remoteErrorName(of: failure) == refusal {
        tokenctl_g_error_free(failure)
        error.pointee = nil
        return nil
      }
      // Classified, with its name, by GLibBridge.call.
      return reply
    }
    return reply ?? nil
  }

  /// Opens a session with `algorithm` and no input (`plain`'s); its object path, or nil
  /// when the service does not support the algorithm, as the spec lets it refuse any.
  func openSession(algorithm: String, timeout: Int32) throws -> String? {
    let parameters = BusValue.tuple([.string(algorithm), .variant(.string(""))]).variant()
    guard
      let reply = try send(
        Self.servicePath, Self.serviceInterface, "OpenSession", parameters, "(vo)", timeout,
        "opening a session with the keyring", refusal: "org.freedesktop.DBus.Error.NotSupported")
    else { return nil }
    defer { tokenctl_g_variant_unref(reply) }
    return Variant.string(reply, 1)
  }

  /// The secrets of the items at `paths` in the plain session at `session` (`GetSecrets`),
  /// by path; an item the service returned no secret for is absent. Nil when a secret
  /// comes in another session, or with parameters, which a plain session has none of: the
  /// path names another session now (a restarted provider numbers its sessions afresh,
  /// and libsecret's Diffie-Hellman session of this process may have taken it).
  func secrets(of paths: some Collection<String>, session: String, timeout: Int32) throws -> [String: [UInt8]]? {
    let reply = try callService(
      "GetSecrets", [.objectPaths(Array(paths)), .objectPath(session)],
      replyType: "(a{o(oayays)})", timeout: timeout, what: "searching the keyring")
    defer { tokenctl_g_variant_unref(reply) }
    let dictionary = tokenctl_g_variant_get_child_value(reply, 0)!
    defer { tokenctl_g_variant_unref(dictionary) }
    var secrets: [String: [UInt8]] = [:]
    for index in 0..<tokenctl_g_variant_n_children(dictionary) {
      let entry = tokenctl_g_variant_get_child_value(dictionary, index)!
      defer { tokenctl_g_variant_unref(entry) }
      let secret = tokenctl_g_variant_get_child_value(entry, 1)!
      defer { tokenctl_g_variant_unref(secret) }
      // (session, parameters, value, content type): a plain session's value is the secret.
      let parameters = tokenctl_g_variant_get_child_value(secret, 1)!
      let encrypted = tokenctl_g_variant_n_children(parameters) != 0
      tokenctl_g_variant_unref(parameters)
      guard !encrypted, Variant.string(secret, 0) == session else { return nil }
      let value = tokenctl_g_variant_get_child_value(secret, 2)!
      defer { tokenctl_g_variant_unref(value) }
      var count = 0
      let bytes = tokenctl_g_variant_get_fixed_array(value, &count, 1)
      secrets[Variant.string(entry, 0)] = Array(UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : count))
    }
    return secrets
  }

  /// A method of the service object (`org.freedesktop.Secret.Service`).
  func callService(
    _ method: String, _ arguments: [BusValue], replyType: String, timeout: Int32 = -1, what: String
  ) throws -> OpaquePointer {
    try call(
      Self.servicePath, Self.serviceInterface, method, BusValue.tuple(arguments).variant(), replyType: replyType,
      timeout: timeout, what: what)
  }

  /// The properties of `interface` at `path`, as a dictionary (`a{sv}`): one `GetAll`.
  func properties(of path: String, interface name: String) throws -> OpaquePointer {
    let reply = try call(
      path, "org.freedesktop.DBus.Properties", "GetAll", BusValue.tuple([.string(name)]).variant(),
      replyType: "(a{sv})", what: "searching the keyring")
    defer { tokenctl_g_variant_unref(reply) }
    return tokenctl_g_variant_get_child_value(reply, 0)!
  }

  /// The path of the collection the service gives `alias` (`ReadAlias`), nil when none.
  func collection(alias: String) throws -> String? {
    let reply = try callService(
      "ReadAlias", [.string(alias)], replyType: "(o)", what: "opening the default keyring")
    defer { tokenctl_g_variant_unref(reply) }
    let path = Variant.string(reply, 0)
    // The service says "no such collection" with the root path.
    return path == "/" ? nil : path
  }

  /// The label of the collection at `path`.
  func label(ofCollection path: String) throws -> String {
    let properties = try properties(of: path, interface: Self.collectionInterface)
    defer { tokenctl_g_variant_unref(properties) }
    guard let value = Variant.lookup(properties, "Label", type: "s") else { return "" }
    defer { tokenctl_g_variant_unref(value) }
    return String(cString: tokenctl_g_variant_get_string(value, nil))
  }

  /// An array of object paths (`ao`).
  static func objectPaths(_ paths: some Collection<String>) -> BusValue { .objectPaths(Array(paths)) }
}
