import ApplicationConsent
import GLibBus
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
/// The application is told anew on every call, never kept: a process may open a
/// connection and then exec another program that goes on using it (tokenctl, or from
/// tokenctl to any other), and it is then that program asking. What is kept per unique
/// name is only what cannot change while it is connected: the pid the bus gave (a unique
/// name is never given to another connection) and that process's start time, which
/// `exec` keeps and a recycled pid does not have. So a call costs a few reads of /proc,
/// not a round trip to the bus daemon.
final class BusPeers: @unchecked Sendable {
  /// A process by pid and start time.
  private struct Process {
    var pid: Int32
    var started: UInt64
  }

  private let bus: DBusConnection
  private let known = Mutex<[String: Process]>([:])

  init(bus: DBusConnection) { self.bus = bus }

  /// The application of `sender` now, or why it cannot be told.
  func application(of sender: String) -> PeerIdentification {
    if let process = known.withLock({ $0[sender] }) {
      // The same process as when the name was first seen connected: it holds the name still.
      return PeerApplication.identify(
        pid: process.pid, stillConnected: { PeerApplication.startTime(process.pid) == process.started })
    }
    guard let pid = processID(of: sender), let started = PeerApplication.startTime(pid) else {
      return .failure(.unreadable)
    }
    let identified = PeerApplication.identify(
      pid: pid, stillConnected: { PeerApplication.startTime(pid) == started && hasOwner(sender) })
    // Kept once the process was seen to hold the name (every answer but unreadable says
    // so): a peer that could not be read may be readable later.
    if identified != .failure(.unreadable) {
      known.withLock { known in
        // A bound: callers that come and go would otherwise pile up.
        if known.count >= 512 { known.removeAll() }
        known[sender] = Process(pid: pid, started: started)
      }
    }
    return identified
  }

  /// The connections seen so far that are still on the bus, with their applications now.
  func connected() -> [(name: String, application: PeerApplication)] {
    let seen = known.withLock { Array($0.keys) }
    return seen.compactMap { name in
      guard hasOwner(name), case .success(let application) = application(of: name) else { return nil }
      return (name: name, application: application)
    }
  }

  private func processID(of sender: String) -> Int32? {
    guard
      case .tuple(let reply)? = try? bus.callBus(
        "GetConnectionCredentials", .tuple([.string(sender)]), replyType: "(a{sv})",
        timeout: AgentBusService.callTimeout),
      case .dictionary(let credentials)? = reply.first
    else { return nil }
    func number(_ key: String) -> UInt32? {
      guard case .uint32(let value)? = credentials.first(where: { $0.0 == key })?.1 else { return nil }
      return value
    }
    // The session bus is the user's, but a bus can be opened to others: check.
    guard number("UnixUserID") == getuid(), let pid = number("ProcessID") else { return nil }
    return Int32(bitPattern: pid)
  }

  private func hasOwner(_ name: String) -> Bool {
    guard
      case .tuple(let reply)? = try? bus.callBus(
        "NameHasOwner", .tuple([.string(name)]), replyType: "(b)", timeout: AgentBusService.callTimeout),
      case .boolean(let owned)? = reply.first
    else { return false }
    return owned
  }
}
