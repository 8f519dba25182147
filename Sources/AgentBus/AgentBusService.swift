import ApplicationConsent
import CLibSecret
import GLibBus
import ProcessRuntime
import Synchronization
// `AgentBusMethods` answers in `BusValue`s: whoever implements it gets them with AgentBus.
@_exported import enum GLibBus.BusValue

#if canImport(Glibc)
  import Glibc
#endif

/// What the agent answers on D-Bus: the methods of `org.tokenctl.Agent1`, for a caller
/// already told apart (or one that could not be, which gets what nobody allowed).
public protocol AgentBusMethods: Sendable {
  /// `ListAccounts`: an `aa{sv}` value.
  func listAccounts(group: String, caller: PeerIdentification) async throws(AgentBusError) -> BusValue
  /// `GetAccessToken`: the token and when it expires (Unix seconds, 0 for never).
  func accessToken(
    group: String, account: String, minimumValidity: UInt32, caller: PeerIdentification
  ) async throws(AgentBusError) -> (token: String, expiresAt: Int64)
}

/// The agent's object on the session bus: `org.tokenctl.Agent` at `/org/tokenctl/Agent`,
/// through GLib's GDBus (libsecret's GLib, loaded on first use).
///
/// Calls arrive on a thread of the service's own, which runs a GLib main loop on a main
/// context of its own; each is answered from a task on ``ThreadPoolExecutor``, since an
/// answer may wait for a refresh, and GDBus takes a reply from any thread.
public final class AgentBusService: @unchecked Sendable {
  /// Longer than any name or account a caller could mean: a bound on what we look at.
  static let longestArgument = 1024
  /// How long the agent waits for the bus daemon or the notification server: they answer
  /// at once, and a caller waits for what waits on them.
  static let callTimeout: Int32 = 5000

  let bus: DBusConnection
  /// The loop calls and signals are delivered to, on the service's thread.
  let loop = MainLoopThread(name: "agent-bus")
  let methods: any AgentBusMethods
  let peers: BusPeers
  let log: @Sendable (String) -> Void
  private let registration = Mutex<UInt32>(0)
  private var vtable = GDBusInterfaceVTable()

  /// Connects to the session bus, registers the object and takes the well-known name;
  /// throws when there is no bus or another program holds the name. Calls are answered
  /// once ``start()`` runs the service's thread.
  public init(methods: any AgentBusMethods, log: @escaping @Sendable (String) -> Void) throws(AgentBusError) {
    do {
      try GLib.load()
    } catch {
      throw AgentBusError(.unavailable, "GLib could not be loaded: \(error.message)")
    }
    do {
      bus = try DBusConnection.session()
    } catch {
      throw AgentBusError(.unavailable, "no session bus: \(error.message)")
    }
    self.methods = methods
    self.log = log
    peers = BusPeers(bus: bus)
    try register()
    try requestName()
  }

  /// Makes the process leave (SIGTERM, which the agent takes as its signal to stop) when
  /// the session bus closes its connection: a D-Bus-activated agent, whose session ended,
  /// must not run on. GDBus does that for the shared bus connection ("exit-on-close"),
  /// but only from the main context the connection was made in (GLib's default one, which
  /// nothing else in the agent runs), and by `raise`, which a thread that blocks SIGTERM
  /// (as the threads of Swift's pool do) never delivers: a thread of its own runs that
  /// context, with the stop signals unblocked. Idle, it sleeps in `poll`.
  public static func leaveWhenTheBusCloses() -> Bool {
    guard (try? GLib.load()) != nil else { return false }
    // Never stopped: it runs as long as the process.
    let loop = MainLoopThread(name: "bus-close-watch", globalContext: true)
    do {
      try loop.start {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
      }
      return true
    } catch {
      return false
    }
  }

  /// Runs the service's thread, which takes calls and signals from now on. Whatever
  /// subscribes in the service's context (``DesktopNotifications``) does so before: a
  /// context can be made a thread's default only while no other thread runs it.
  public func start() throws(AgentBusError) {
    do {
      try loop.start()
    } catch {
      throw AgentBusError(.unavailable, "cannot start the D-Bus thread")
    }
  }

  /// Our object, its calls dispatched in our context: GDBus takes the thread-default
  /// context at registration.
  private func register() throws(AgentBusError) {
    var error: UnsafeMutablePointer<GError>? = nil
    guard let node = tokenctl_g_dbus_node_info_new_for_xml(AgentBusInterface.introspection, &error) else {
      throw AgentBusError(.unavailable, "the interface does not parse: \(GLibError(taking: error).message)")
    }
    defer { tokenctl_g_dbus_node_info_unref(node) }
    let interface = tokenctl_g_dbus_node_info_lookup_interface(node, AgentBusInterface.name)
    vtable.method_call = { _, sender, _, _, method, parameters, invocation, data in
      let service = Unmanaged<AgentBusService>.fromOpaque(data!).takeUnretainedValue()
      service.received(
        sender: sender.map { String(cString: $0) } ?? "", method: method.map { String(cString: $0) } ?? "",
        parameters: parameters!, invocation: invocation!)
    }
    let id = loop.withThreadDefault {
      withUnsafePointer(to: &vtable) { vtable in
        tokenctl_g_dbus_connection_register_object(
          bus.pointer, AgentBusInterface.objectPath, interface, vtable, Unmanaged.passUnretained(self).toOpaque(), nil,
          &error)
      }
    }
    guard id != 0 else {
      throw AgentBusError(.unavailable, "cannot register the object: \(GLibError(taking: error).message)")
    }
    registration.withLock { $0 = id }
  }

  /// `RequestName` without queueing: a second agent on the bus keeps its socket and goes
  /// without D-Bus, rather than waiting to take over.
  private func requestName() throws(AgentBusError) {
    let request = BusValue.tuple([.string(AgentBusInterface.busName), .uint32(4 /* DBUS_NAME_FLAG_DO_NOT_QUEUE */)])
    guard
      case .tuple(let reply)? = try? bus.callBus("RequestName", request, replyType: "(u)", timeout: Self.callTimeout)
    else { throw AgentBusError(.unavailable, "cannot request \(AgentBusInterface.busName)") }
    // 1: now the primary owner; 4: already was.
    switch reply.first {
    case .uint32(1), .uint32(4): return
    default:
      throw AgentBusError(
        .unavailable, "another program owns \(AgentBusInterface.busName) on this session bus (another agent?)")
    }
  }

  /// Emits `signal` of our interface, `body` its tuple, to each connection that called us
  /// and whose application `allowed` admits, as a unicast signal: a signal broadcast on
  /// the bus reaches every client, sandboxed ones and ones refused the account included,
  /// and ours name accounts.
  public func emit(_ signal: String, _ body: BusValue, to allowed: (PeerApplication) -> Bool) {
    for peer in peers.connected() where allowed(peer.application) {
      do {
        try bus.emit(signal, of: AgentBusInterface.name, at: AgentBusInterface.objectPath, body, to: peer.name)
      } catch {
        log("could not emit \(signal): \(error.message)")
      }
    }
  }

  /// Unregisters the object and stops the thread (and waits for it, unless called on it);
  /// calls in flight still get their answers.
  public func stop() {
    let id = registration.withLock { id in
      defer { id = 0 }
      return id
    }
    guard id != 0 else { return }
    _ = tokenctl_g_dbus_connection_unregister_object(bus.pointer, id)
    loop.stop()
  }

  // MARK: Calls

  /// On the bus thread: takes what the call carries, then answers it from the pool.
  private func received(sender: String, method: String, parameters: OpaquePointer, invocation: OpaquePointer) {
    let arguments = Self.arguments(parameters)
    let reply = Reply(invocation)
    Task(executorPreference: ThreadPoolExecutor.shared) { [self] in
      do throws(AgentBusError) {
        for case .string(let text) in arguments {
          try Self.check(text)
        }
        let caller = peers.application(of: sender)
        switch (method, arguments.count) {
        case ("ListAccounts", 1):
          guard case .string(let group) = arguments[0] else { throw Self.badArguments }
          reply.send(.tuple([try await methods.listAccounts(group: group, caller: caller)]))
        case ("GetAccessToken", 3):
          guard case .string(let group) = arguments[0], case .string(let account) = arguments[1],
            case .uint32(let minimum) = arguments[2]
          else { throw Self.badArguments }
          let (token, expiresAt) = try await methods.accessToken(
            group: group, account: account, minimumValidity: minimum, caller: caller)
          reply.send(.tuple([.string(token), .int64(expiresAt)]))
        default:
          // GDBus refuses methods the interface does not declare; this is belt and braces.
          throw AgentBusError(.invalidArguments, "no method \(method) with \(arguments.count) arguments")
        }
      } catch {
        reply.fail(error)
      }
    }
  }

  static let badArguments = AgentBusError(.invalidArguments, "the arguments do not match the method")

  /// No account, group or name has control characters, or is longer than any could be.
  static func check(_ text: String) throws(AgentBusError) {
    guard text.utf8.count <= longestArgument else {
      throw AgentBusError(.invalidArguments, "an argument of \(text.utf8.count) bytes is longer than any name")
    }
    guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
      throw AgentBusError(.invalidArguments, "an argument has control characters, which no name has")
    }
  }

  /// The values of a call's parameter tuple.
  private static func arguments(_ tuple: OpaquePointer) -> [BusValue] {
    guard case .tuple(let values) = BusValue(reading: tuple) else { return [] }
    return values
  }

  /// A method invocation to answer once, from any thread.
  final class Reply: @unchecked Sendable {
    private let invocation: OpaquePointer
    init(_ invocation: OpaquePointer) { self.invocation = invocation }
    /// Both take the invocation's reference: GDBus frees it with the reply.
    func send(_ value: BusValue) { tokenctl_g_dbus_method_invocation_return_value(invocation, value.variant()) }
    func fail(_ error: AgentBusError) {
      tokenctl_g_dbus_method_invocation_return_dbus_error(invocation, error.name, error.message)
    }
  }
}
