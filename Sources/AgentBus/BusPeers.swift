import CLibSecret
import NativeAppSupport
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The application behind each caller on the bus: the bus daemon gives the pid of a
/// unique name (`GetConnectionCredentials`), /proc gives its executable or its Flatpak
/// sandbox's app id (``PeerApplication/identify(pid:stillConnected:)``), and the name
/// still having an owner afterwards proves that the pid was not recycled meanwhile.
///
/// The pid is the bus daemon's word, never the caller's. For a Flatpak app it is the pid
/// of the app's xdg-dbus-proxy, which flatpak runs in a sandbox holding the app's
/// `/.flatpak-info`: the app is told from there, as xdg-desktop-portal tells it.
///
/// A unique name is never given to another connection for the life of the bus, so what
/// was found for it holds as long as it is connected: one look per connection, not per
/// call, which keeps a persistent client's calls fast.
final class BusPeers: @unchecked Sendable {
  private let bus: BusConnection
  private let known = Mutex<[String: PeerApplication]>([:])

  init(bus: BusConnection) { self.bus = bus }

  /// The application of `sender`, or why it cannot be told.
  func application(of sender: String) -> PeerIdentification {
    if let application = known.withLock({ $0[sender] }) { return .success(application) }
    guard let pid = processID(of: sender) else { return .failure(.unreadable) }
    let identified = PeerApplication.identify(pid: pid, stillConnected: { hasOwner(sender) })
    // Only an application is kept: a peer that could not be read may be readable later.
    guard case .success(let application) = identified else { return identified }
    known.withLock { known in
      // A bound: callers that come and go would otherwise pile up.
      if known.count >= 512 { known.removeAll() }
      known[sender] = application
    }
    return identified
  }

  /// The connections seen so far that are still on the bus, with their applications.
  func connected() -> [(name: String, application: PeerApplication)] {
    let seen = known.withLock { $0.map { (name: $0.key, application: $0.value) } }
    return seen.filter { hasOwner($0.name) }
  }

  private func processID(of sender: String) -> Int32? {
    guard let reply = bus.callBus("GetConnectionCredentials", .tuple([.string(sender)]), replyType: "(a{sv})")
    else { return nil }
    return BusConnection.first(of: reply) { credentials -> Int32? in
      func number(_ key: String) -> UInt32? {
        guard let value = "u".withCString({ tokenctl_g_variant_lookup_value(credentials, key, OpaquePointer($0)) })
        else { return nil }
        defer { tokenctl_g_variant_unref(value) }
        return tokenctl_g_variant_get_uint32(value)
      }
      // The session bus is the user's, but a bus can be opened to others: check.
      guard number("UnixUserID") == getuid(), let pid = number("ProcessID") else { return nil }
      return Int32(bitPattern: pid)
    }
  }

  private func hasOwner(_ name: String) -> Bool {
    guard let reply = bus.callBus("NameHasOwner", .tuple([.string(name)]), replyType: "(b)") else { return false }
    return BusConnection.first(of: reply) { tokenctl_g_variant_get_boolean($0) != 0 }
  }
}
