import CLibSecret
import CLinux
import Synchronization

/// A GLib main loop on a thread of its own, running a main context of its own: the one
/// place tokenctl runs GLib's loops. GDBus delivers signals, and an object's method calls,
/// to the thread-default context of the thread that subscribed or registered
/// (``withThreadDefault(_:)``), so that here neither Swift's cooperative pool nor any
/// other GLib user of the process has to run a loop.
///
/// ``stop()`` works at any moment, before the loop runs included: it quits through a
/// source of the context, which the loop dispatches whenever it runs, where
/// `g_main_loop_quit` on a loop not yet running is forgotten by `g_main_loop_run`, and the
/// thread would run on for good.
public final class MainLoopThread: @unchecked Sendable {
  /// The context the loop runs; nil for GLib's global default one.
  public let context: OpaquePointer?
  private let loop: OpaquePointer
  /// The thread's name, as `ps -L` and /proc/PID/task/*/comm show it (15 bytes at most):
  /// what wakes a thread can then be told apart.
  private let name: String
  /// The thread (a `GThread`), from ``start(prepare:)`` until ``stop()`` takes it.
  private let thread = Mutex<OpaquePointer?>(nil)
  /// The subscriptions made in the context, ended when the loop ends.
  private let subscriptions = Mutex<[(connection: OpaquePointer, id: UInt32)]>([])
  /// Set by ``stop()``; signals that arrive afterwards are not delivered.
  private let stopped = StopFlag()

  /// A loop in a new main context, which nothing runs until ``start(prepare:)``; with
  /// `globalContext`, in GLib's global default context instead (where GDBus acts on a
  /// closed shared connection, for one).
  public init(name: String, globalContext: Bool = false) {
    self.name = name
    context = globalContext ? nil : tokenctl_g_main_context_new()
    loop = tokenctl_g_main_loop_new(context, 0)
  }

  deinit {
    stop()
    endSubscriptions()
    tokenctl_g_main_loop_unref(loop)
    if let context { tokenctl_g_main_context_unref(context) }
  }

  /// Runs `body` with the context as this thread's default: what GDBus subscribes or
  /// registers meanwhile is delivered to the loop. Only before ``start(prepare:)``: a
  /// context can be made a thread's default only while no other thread runs it.
  public func withThreadDefault<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    try MainContext.withThreadDefault(context, body)
  }

  /// Starts the thread, which runs `prepare` and then the loop until ``stop()``.
  public func start(prepare: @escaping @Sendable () -> Void = {}) throws(GLibError) {
    let body = Unmanaged.passRetained(ThreadBody(self, prepare))
    try thread.withLock { (thread: inout OpaquePointer?) throws(GLibError) in
      var error: UnsafeMutablePointer<GError>? = nil
      guard
        let started = tokenctl_g_thread_try_new(
          name,
          { data in
            let body = Unmanaged<ThreadBody>.fromOpaque(data!).takeRetainedValue()
            body.prepare()
            body.loop.run()
            return nil
          }, body.toOpaque(), &error)
      else {
        body.release()
        throw GLibError(taking: error)
      }
      thread = started
    }
  }

  /// Stops the loop: no signal is delivered after this returns, and the thread has ended
  /// (unless this is called on the thread itself, which then ends as soon as what it runs
  /// returns). Calling it again does nothing more.
  public func stop() {
    // Under the lock, so that a second, concurrent `stop()` returns only once the first
    // has silenced the subscriptions.
    let taken = thread.withLock { thread in
      defer { thread = nil }
      requestStop()
      return thread
    }
    guard let taken else { return }
    if taken == tokenctl_g_thread_self() {
      tokenctl_g_thread_unref(taken)
    } else {
      _ = tokenctl_g_thread_join(taken)
    }
  }

  /// Subscribes `handler` to the signals on `connection` that match (nil: any sender,
  /// interface, member, path or first argument), delivered on the loop's thread one at a
  /// time until ``stop()``. Only before ``start(prepare:)``, as ``withThreadDefault(_:)``.
  /// A well-known `sender` is followed from one owner to the next: GDBus delivers only
  /// what the name's current owner sends. `depth`: how many levels of the signal's body
  /// are read (``BusValue/init(reading:depth:)``).
  public func subscribe(
    on connection: DBusConnection, sender: String?, interface: String?, member: String?, path: String?,
    arg0: String? = nil, depth: Int = .max, _ handler: @escaping @Sendable (DBusSignal) -> Void
  ) {
    let data = Unmanaged.passRetained(SignalHandler(stopped, depth: depth, handler)).toOpaque()
    let id = withThreadDefault {
      tokenctl_g_dbus_connection_signal_subscribe(
        connection.pointer, sender, interface, member, path, arg0, G_DBUS_SIGNAL_FLAGS_NONE,
        { _, sender, path, interface, member, parameters, data in
          let subscription = Unmanaged<SignalHandler>.fromOpaque(data!).takeUnretainedValue()
          guard !subscription.stopped.isSet, let parameters else { return }
          func text(_ string: UnsafePointer<CChar>?) -> String { string.map { String(cString: $0) } ?? "" }
          subscription.handler(
            DBusSignal(
              sender: text(sender), path: text(path), interface: text(interface), member: text(member),
              body: BusValue(reading: parameters, depth: subscription.depth)))
        }, data, { data in Unmanaged<SignalHandler>.fromOpaque(data!).release() })
    }
    // The connection is kept until the subscription ends, after whoever made it is gone.
    _ = tokenctl_g_object_ref(UnsafeMutableRawPointer(connection.pointer))
    subscriptions.withLock { $0.append((connection.pointer, id)) }
  }

  /// The loop's thread: runs the loop until ``stop()``, then ends the subscriptions.
  func run() {
    _ = tokenctl_set_thread_name(name)
    withThreadDefault { tokenctl_g_main_loop_run(loop) }
    endSubscriptions()
  }

  /// Makes ``run()`` return, from any thread, whether or not it runs yet.
  func requestStop() {
    stopped.set()
    let source = tokenctl_g_idle_source_new()
    tokenctl_g_source_set_callback(
      source,
      { data in
        tokenctl_g_main_loop_quit(OpaquePointer(data))
        return 0  // G_SOURCE_REMOVE
      }, UnsafeMutableRawPointer(loop), nil)
    _ = tokenctl_g_source_attach(source, context)
    tokenctl_g_source_unref(source)
  }

  /// Ends the subscriptions, and drops the signals that arrived for them but were not
  /// delivered: GDBus skips those of a subscription that has ended, and until they are
  /// dispatched they would keep the context alive.
  private func endSubscriptions() {
    let ended = subscriptions.withLock { subscriptions in
      defer { subscriptions = [] }
      return subscriptions
    }
    for (connection, id) in ended {
      tokenctl_g_dbus_connection_signal_unsubscribe(connection, id)
      tokenctl_g_object_unref(UnsafeMutableRawPointer(connection))
    }
    if !ended.isEmpty { MainContext.drain(context) }
  }

  /// What the thread runs; keeps the loop alive until the thread ends.
  private final class ThreadBody {
    let loop: MainLoopThread
    let prepare: @Sendable () -> Void
    init(_ loop: MainLoopThread, _ prepare: @escaping @Sendable () -> Void) {
      self.loop = loop
      self.prepare = prepare
    }
  }

  /// One subscription's handler, which GDBus frees when the subscription ends.
  private final class SignalHandler {
    let stopped: StopFlag
    let depth: Int
    let handler: @Sendable (DBusSignal) -> Void
    init(_ stopped: StopFlag, depth: Int, _ handler: @escaping @Sendable (DBusSignal) -> Void) {
      self.stopped = stopped
      self.depth = depth
      self.handler = handler
    }
  }

  private final class StopFlag: Sendable {
    private let flag = Atomic(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
  }
}

/// A signal as GDBus delivered it: who sent it (a unique name, which the bus daemon sets
/// and no client can forge), from which object, and its body.
public struct DBusSignal: Sendable {
  public var sender: String
  public var path: String
  public var interface: String
  public var member: String
  public var body: BusValue
}
