import ApplicationConsent
import CLibSecret
import ProcessRuntime
import Synchronization

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

  let connection: OpaquePointer
  var bus: BusConnection { BusConnection(pointer: connection) }
  let context: OpaquePointer
  let methods: any AgentBusMethods
  let peers: BusPeers
  let log: @Sendable (String) -> Void
  private let loop: OpaquePointer
  private let registration = Mutex<UInt32>(0)
  private var vtable = GDBusInterfaceVTable()

  /// Connects to the session bus, registers the object and takes the well-known name;
  /// throws when there is no bus or another program holds the name. Calls are answered
  /// once ``start()`` runs the service's thread.
  public init(methods: any AgentBusMethods, log: @escaping @Sendable (String) -> Void) throws(AgentBusError) {
    if let failure = tokenctl_libsecret_load() {
      throw AgentBusError(.unavailable, "GLib could not be loaded: \(String(cString: failure))")
    }
    var error: UnsafeMutablePointer<GError>? = nil
    guard let connection = tokenctl_g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
      throw AgentBusError(.unavailable, "no session bus: \(Self.take(error))")
    }
    self.connection = connection
    self.methods = methods
    self.log = log
    context = tokenctl_g_main_context_new()!
    loop = tokenctl_g_main_loop_new(context, 0)!
    peers = BusPeers(bus: BusConnection(pointer: connection))
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
    guard tokenctl_libsecret_load() == nil else { return false }
    return DetachedThread.start {
      var signals = sigset_t()
      sigemptyset(&signals)
      for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
      pthread_sigmask(SIG_UNBLOCK, &signals, nil)
      let loop = tokenctl_g_main_loop_new(nil, 0)!
      tokenctl_g_main_loop_run(loop)
    }
  }

  /// Runs the service's thread, which takes calls and signals from now on. Whatever
  /// subscribes in the service's context (``DesktopNotifications``) does so before: a
  /// context can be made a thread's default only while no other thread runs it.
  public func start() throws(AgentBusError) {
    guard DetachedThread.start({ [self] in tokenctl_g_main_loop_run(loop) }) else {
      throw AgentBusError(.unavailable, "cannot start the D-Bus thread")
    }
  }

  /// Our object, its calls dispatched in our context: GDBus takes the thread-default
  /// context at registration.
  private func register() throws(AgentBusError) {
    var error: UnsafeMutablePointer<GError>? = nil
    guard let node = tokenctl_g_dbus_node_info_new_for_xml(AgentBusInterface.introspection, &error) else {
      throw AgentBusError(.unavailable, "the interface does not parse: \(Self.take(error))")
    }
    defer { tokenctl_g_dbus_node_info_unref(node) }
    let interface = tokenctl_g_dbus_node_info_lookup_interface(node, AgentBusInterface.name)
    vtable.method_call = { _, sender, _, _, method, parameters, invocation, data in
      let service = Unmanaged<AgentBusService>.fromOpaque(data!).takeUnretainedValue()
      service.received(
        sender: sender.map { String(cString: $0) } ?? "", method: method.map { String(cString: $0) } ?? "",
        parameters: parameters!, invocation: invocation!)
    }
    tokenctl_g_main_context_push_thread_default(context)
    let id = withUnsafePointer(to: &vtable) { vtable in
      tokenctl_g_dbus_connection_register_object(
        connection, AgentBusInterface.objectPath, interface, vtable, Unmanaged.passUnretained(self).toOpaque(), nil,
        &error)
    }
    tokenctl_g_main_context_pop_thread_default(context)
    guard id != 0 else { throw AgentBusError(.unavailable, "cannot register the object: \(Self.take(error))") }
    registration.withLock { $0 = id }
  }

  /// `RequestName` without queueing: a second agent on the bus keeps its socket and goes
  /// without D-Bus, rather than waiting to take over.
  private func requestName() throws(AgentBusError) {
    let request = BusValue.tuple([.string(AgentBusInterface.busName), .uint32(4 /* DBUS_NAME_FLAG_DO_NOT_QUEUE */)])
    guard let reply = bus.callBus("RequestName", request, replyType: "(u)") else {
      throw AgentBusError(.unavailable, "cannot request \(AgentBusInterface.busName)")
    }
    // 1: now the primary owner; 4: already was.
    switch BusConnection.first(of: reply, tokenctl_g_variant_get_uint32) {
    case 1, 4: return
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
      var error: UnsafeMutablePointer<GError>? = nil
      if tokenctl_g_dbus_connection_emit_signal(
        connection, peer.name, AgentBusInterface.objectPath, AgentBusInterface.name, signal, body.variant(), &error)
        == 0
      {
        log("could not emit \(signal): \(Self.take(error))")
      }
    }
  }

  /// Unregisters the object and stops the thread; calls in flight still get their answers.
  public func stop() {
    let id = registration.withLock { id in
      defer { id = 0 }
      return id
    }
    guard id != 0 else { return }
    _ = tokenctl_g_dbus_connection_unregister_object(connection, id)
    tokenctl_g_main_loop_quit(loop)
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

  /// The strings and numbers of a call's parameter tuple (the interface has no others).
  private static func arguments(_ tuple: OpaquePointer) -> [BusValue] {
    var values: [BusValue] = []
    for index in 0..<tokenctl_g_variant_n_children(tuple) {
      let child = tokenctl_g_variant_get_child_value(tuple, index)!
      defer { tokenctl_g_variant_unref(child) }
      switch String(cString: tokenctl_g_variant_get_type_string(child)) {
      case "s": values.append(.string(String(cString: tokenctl_g_variant_get_string(child, nil))))
      case "u": values.append(.uint32(tokenctl_g_variant_get_uint32(child)))
      default: values.append(.tuple([]))
      }
    }
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

  private static func take(_ error: UnsafeMutablePointer<GError>?) -> String {
    guard let error else { return "unknown error" }
    defer { tokenctl_g_error_free(error) }
    return error.pointee.message.map { String(cString: $0) } ?? "unknown error"
  }
}
