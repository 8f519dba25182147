import AgentProtocol
import ApplicationConsent
import CLinux
import ProcessRuntime
import Synchronization
import TokenCtlRuntime
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The resident agent: accepts clients on its socket and has ``AgentService`` answer them,
/// until SIGTERM or SIGINT (tokenctl-agent(1)).
///
/// Threads, not the cooperative pool, do the blocking parts: one accepts, one per
/// connection (``ConnectionThreads``, which keeps a few for the next) reads its request
/// within a deadline and, once the service has answered, writes the answer within another
/// (``PendingAnswer``). A slow or silent client holds only its own thread; a bad one gets a
/// `refused` answer and changes nothing.
///
/// ## Who runs where
/// The agent's threads, all of one process (`tokenctl agent run`), written down once here:
/// - **The pool** (`ThreadPoolExecutor.shared`, the main thread one of its threads, up to
///   32): every task of the service: answers that wait (a refresh, a request of an
///   application), refreshes ahead, the D-Bus methods' answers.
///   Nothing on it blocks for long; what blocks has a thread below.
/// - **Connections** (``ConnectionThreads``, up to 8 parked), leader and followers: one of
///   them waits in `accept4` (``acceptOne()``), checks the peer's uid and the per-process
///   bound, hands the wait for the next connection to a parked thread (or a new one), and
///   serves the connection it took itself: a request's read, the peer's identity
///   (`/proc`), the answer itself when it is a token from memory
///   (``AgentService/answerAtOnce(_:handedOut:)``), else the wait for the pool's, and the
///   write. Then it parks. A client's answer waits for one thread to wake, not two (an
///   accepting thread that handed each connection on cost a context switch more on every
///   answer), and no connection, however slow, holds up the next.
/// - **Forwarded hosts** (`Agent+Forwarding.swift`), two threads for each open `tokenctl
///   ssh`: the connection thread of its `forward` request, which waits for the wrapper to
///   hang up, and one that accepts on the host's socket, holds connections over the idle
///   bound until their request comes (``heldPerHost``), and serves each on a connection
///   thread as above.
/// - **Signals** (``SignalPipe``): waits for SIGTERM, SIGINT and SIGHUP.
/// - **Socket watch** (``watchSocket()``): inotify on the socket's folder.
/// - **Timers** (`DeadlineTimer.shared`): the service's sleeps, refreshes ahead included.
/// - **Wall clock** (`WallClockWatch`): a step of the clock or a resume.
/// - **GLib**: the keyring's item signals (`KeyringChangeMonitor`, a GLib thread of its
///   own), the D-Bus front end's main loop (`AgentBusService`: method calls, notification
///   signals), and the default main context that leaves when the bus closes
///   (`AgentBusService.leaveWhenTheBusCloses()`).
/// - **For a while**: the scan of the accounts config.toml keeps fresh (at start, and a
///   second after the keyring changed; one at a time, once more if changes came in
///   meanwhile), and one reader per refresh child (`ProcessRefreshIsolation`), each a
///   thread that ends with its work.
public final class Agent: Sendable {
  /// How long a client has to send its request: ours write it as soon as they connect, so
  /// a second is plenty on a loaded machine, and a connection that sends nothing holds
  /// its thread no longer than that.
  static let requestTimeoutMilliseconds: Int32 = 1000
  /// How long a client has to take its answer.
  static let answerTimeoutMilliseconds: Int32 = 5000
  /// How long an answer may take before a client that understands is told `working`: an
  /// answer from memory takes about a millisecond, one that refreshes tens or hundreds;
  /// well below the client's wait for its first frame (`AgentConnection`).
  static let workingAfterMilliseconds = 250
  /// How often an agent at work says `working` again: well within the client's wait for
  /// the next frame (`AgentConnection.silenceMilliseconds`), so that a client can tell an
  /// agent that went silent in the middle of a refresh in seconds, not at the refresh's
  /// own limits.
  static let workingEveryMilliseconds = 1000
  /// Connections of one process that may wait at once for their request to be read (each
  /// holds a thread meanwhile): a client needs one, a program that asks from several
  /// threads a few; a process holding thousands of idle ones would otherwise take every
  /// thread and descriptor the agent has from everybody else. Only idle ones count: a
  /// connection counts from its accept until its request is read, and one whose request is
  /// already waiting is never turned away.
  static let connectionsPerProcess = 16

  let listener: AgentListener
  let service: AgentService
  let desktop: DesktopMethods
  let log: @Sendable (String) -> Void
  private let refusedPeers = Atomic<Int>(0)
  /// Connections whose request is being read, by the peer's pid.
  private let open = Mutex<[Int32: Int]>([:])
  /// How many threads that served a connection are kept for the next ones.
  public static let keptConnectionThreads = 8
  /// The threads connections are served on (``ConnectionThreads``).
  let threads = ConnectionThreads(kept: keptConnectionThreads)
  /// The sockets open for forwarded hosts (``ForwardedSocket``), closed when the agent stops.
  let forwarded = Mutex<[ObjectIdentifier: ForwardedSocket]>([:])

  /// `desktop` answers the applications that are not tokenctl's own, behind its consent gate.
  public init(
    listener: AgentListener, service: AgentService, desktop: DesktopMethods,
    log: @escaping @Sendable (String) -> Void
  ) {
    self.listener = listener
    self.service = service
    self.desktop = desktop
    self.log = log
  }

  /// Serves until SIGTERM, SIGINT or SIGHUP (the session's terminal or bus went away), or
  /// until its socket or the folder holding it is removed (the session's runtime folder
  /// deleted: an agent nobody can reach must not run on, refreshing, holding its bus
  /// name), then removes the socket and returns. The refresh children it started finish
  /// on their own: a refresh in flight is never cut between the exchange and the store.
  public func run() async {
    let stop = SignalPipe(signals: [SIGTERM, SIGINT, SIGHUP])
    Self.raiseDescriptorLimit()
    if !threads.run({ [self] in acceptOne() }) { log("could not start a thread to accept connections") }
    watchSocket()
    log("listening on \(listener.path) (pid \(getpid()))")
    await stop.wait()
    log("stopping")
    service.stop()
    listener.shutDown()
    for socket in forwarded.withLock({ Array($0.values) }) { socket.close() }
  }

  /// Stops the agent when its socket, or the folder it is in, is removed or moved away:
  /// inotify, so that an idle agent still makes no system call.
  private func watchSocket() {
    let fd = inotify_init1(Int32(IN_CLOEXEC))
    guard fd >= 0 else { return }
    let folder = String(listener.path[..<(listener.path.lastIndex(of: "/") ?? listener.path.startIndex)])
    let name = String(
      listener.path[
        (listener.path.lastIndex(of: "/").map { listener.path.index(after: $0) } ?? listener.path.startIndex)...])
    let mask = UInt32(IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF)
    guard inotify_add_watch(fd, folder.isEmpty ? "/" : folder, mask) >= 0 else {
      close(fd)
      return
    }
    let started = DetachedThread.start { [log] in
      var buffer = [UInt8](repeating: 0, count: 4096)
      while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { return }
        if Self.removes(buffer[..<count], name: name) {
          log("the socket \(name) or its folder was removed: stopping")
          SignalPipe.trigger()
          return
        }
      }
    }
    if !started { close(fd) }
  }

  /// Whether the inotify events in `events` remove the watched folder or the entry `name`.
  static func removes(_ events: ArraySlice<UInt8>, name: String) -> Bool {
    var offset = events.startIndex
    let header = MemoryLayout<inotify_event>.size
    while offset + header <= events.endIndex {
      let (mask, length) = events[offset..<(offset + header)].withUnsafeBytes { raw in
        (
          raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self),
          Int(raw.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        )
      }
      let nameBytes = events[(offset + header)..<min(offset + header + length, events.endIndex)]
      let entry = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
      if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 { return true }
      if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0, entry == name { return true }
      offset += header + length
    }
    return false
  }

  /// Waits for the next connection, hands the wait for the one after it to another
  /// thread, and serves it on this one; returns when the listener is closed (the agent
  /// stops), and after serving, so that the thread parks. Should no thread be had, this
  /// one serves and then waits again itself.
  private func acceptOne() {
    while true {
      let connection = tokenctl_accept4(listener.descriptor, Int32(SOCK_CLOEXEC.rawValue))
      if connection < 0 {
        if errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE {
          if errno == EMFILE || errno == ENFILE { usleep(10_000) }
          continue
        }
        // The listener was closed: we are stopping.
        return
      }
      // Another user's process gets nothing, not even an error.
      guard AgentSocketIO.peerUID(connection) == getuid() else {
        refusedPeers.add(1, ordering: .relaxed)
        log("refused a connection from another user (uid \(AgentSocketIO.peerUID(connection).map(String.init) ?? "?"))")
        close(connection)
        continue
      }
      guard let pid = admitIdle(connection) else {
        close(connection)
        continue
      }
      let handedOn = threads.run({ [self] in acceptOne() })
      serve(connection, requestRead: { [self] in closed(pid) })
      if handedOn { return }
    }
  }

  /// The pid `connection` counts against while its request is read, or nil when it is to
  /// be closed at once (``connectionsPerProcess``), before it costs a thread: too many idle
  /// ones at once from one process. A connection whose request is already there is not
  /// idle, however many of its process's are open: a program that asks from many threads
  /// gets every answer. Every socket of the agent applies this, a forwarded host's too,
  /// whose connections are all the local ssh's. Call ``closed(_:)`` once the request is read.
  func admitIdle(_ connection: Int32) -> Int32? {
    let pid = AgentSocketIO.peerPID(connection) ?? 0
    let full = open.withLock { $0[pid, default: 0] >= Self.connectionsPerProcess }
    guard !full || Self.hasBytesWaiting(connection) else { return nil }
    open.withLock { $0[pid, default: 0] += 1 }
    return pid
  }

  /// One connection of `pid` fewer waiting for its request to be read.
  func closed(_ pid: Int32) {
    open.withLock { open in
      let left = open[pid, default: 1] - 1
      open[pid] = left > 0 ? left : nil
    }
  }

  /// Raises the soft limit of open descriptors to the hard one: each client holds one
  /// while it is served, and 1,024 is few for an agent that many programs ask at once.
  static func raiseDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
  }

  /// Serves one connection; `requestRead` is called once its request is read or refused,
  /// when it stops counting against its process's bound of idle connections. `host` is
  /// the forwarded host whose socket the connection came to (``ForwardedSocket``): the
  /// request is then the host's, whatever process wrote it.
  func serve(_ connection: Int32, host: HostName? = nil, requestRead: () -> Void) {
    let request: AgentMessage
    let sender: pid_t?
    do {
      defer { requestRead() }
      let sent = try SentRequest.read(
        from: connection, limit: AgentMessage.maximumRequestSize, timeoutMilliseconds: Self.requestTimeoutMilliseconds)
      (request, sender) = (sent.message, sent.sender)
    } catch {
      let refusal = AgentMessage("refused", [.init("reason", "\(error)")])
      try? AgentSocketIO.writeMessage(refusal, to: connection, timeoutMilliseconds: Self.answerTimeoutMilliseconds)
      close(connection)
      return
    }
    if let host {
      let answer = onThePool(request, connection: connection, atWork: true) { [desktop] in
        await desktop.answer(request, host: host)
      }
      try? AgentSocketIO.writeMessage(answer, to: connection, timeoutMilliseconds: Self.answerTimeoutMilliseconds)
      close(connection)
      return
    }
    // The process that wrote the request, not the one that connected (SentRequest). While
    // the client waits, its /proc entry is open to us (AgentConnection).
    let caller =
      (sender ?? AgentSocketIO.peerPID(connection)).map { pid in
        PeerApplication.identify(pid: pid, stillConnected: { Self.isConnected(connection) })
      } ?? .failure(.unreadable)
    let answer: AgentMessage
    let handOuts = HandOuts()
    if case .success(let application) = caller, application.isOwn, request.kind == AgentMessage.Request.forward {
      forward(request, connection: connection)
      close(connection)
      return
    }
    if case .success(let application) = caller, application.isOwn {
      let handedOut: AgentService.HandedOut = { group, account in handOuts.add(group, account) }
      // A token from memory is answered on this thread; the rest on the pool.
      answer =
        service.answerAtOnce(request, handedOut: handedOut)
        ?? onThePool(request, connection: connection) { [service] in
          await service.answer(request, handedOut: handedOut)
        }
    } else {
      answer = onThePool(request, connection: connection, atWork: true) { [desktop] in
        await desktop.answer(request, caller: caller)
      }
    }
    try? AgentSocketIO.writeMessage(answer, to: connection, timeoutMilliseconds: Self.answerTimeoutMilliseconds)
    // The audit line of a token handed to our own client is written once the client has
    // its answer: it costs a lock, an open, a write and a close of the log (a tenth of
    // the agent's time a request), and another process holding the log's lock
    // (rotating it) must not hold up a token. The connection's thread writes it before
    // it takes another connection; a consent decision's lines are written as before.
    if case .success(let application) = caller {
      for (group, account) in handOuts.taken() {
        desktop.gate.handedOut(application, group: group, account: account, via: .socket)
      }
    }
    close(connection)
  }

  /// The tokens one answer handed out, told by the service (on this thread or the pool's)
  /// and audited after the answer is written.
  private final class HandOuts: Sendable {
    private let list = Mutex<[(group: String, account: Account)]>([])
    func add(_ group: String, _ account: Account) { list.withLock { $0.append((group, account)) } }
    func taken() -> [(group: String, account: Account)] { list.withLock { $0 } }
  }

  /// The answer to `request` from the pool, waited for on this thread, which then writes
  /// it: no thread of the pool waits on a slow reader. A client that asked is told
  /// `working` meanwhile, every second, while the answer is at work (``AnswerProgress``;
  /// `atWork`: from the start).
  private func onThePool(
    _ request: AgentMessage, connection: Int32, atWork: Bool = false,
    answering: @escaping @Sendable () async -> AgentMessage
  ) -> AgentMessage {
    let pending = PendingAnswer()
    let progress = AnswerProgress(atWork: atWork)
    // Unstructured tasks do not inherit an executor preference: name the pool.
    Task(executorPreference: ThreadPoolExecutor.shared) {
      pending.deliver(await AnswerProgress.$current.withValue(progress) { await answering() })
    }
    return pending.wait(slowAfter: Self.workingAfterMilliseconds, every: Self.workingEveryMilliseconds) {
      guard request[AgentMessage.progressField] == "1", progress.isAtWork else { return }
      let working = AgentMessage(AgentMessage.Answer.working)
      try? AgentSocketIO.writeMessage(working, to: connection, timeoutMilliseconds: Self.answerTimeoutMilliseconds)
    }
  }
}

extension Agent {
  /// Whether bytes from the peer of `connection` are waiting to be read.
  static func hasBytesWaiting(_ connection: Int32) -> Bool {
    var entry = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, 0) > 0 && entry.revents & Int16(POLLIN) != 0
  }

  /// Whether the peer of `connection` is still there: it has not closed its end. (A peer
  /// that only shut down its writing half, as some clients do after their request, is.)
  static func isConnected(_ connection: Int32) -> Bool {
    var entry = pollfd(fd: connection, events: 0, revents: 0)
    guard poll(&entry, 1, 0) >= 0 else { return false }
    return entry.revents & Int16(POLLHUP | POLLERR) == 0
  }
}

/// Turns SIGTERM and SIGINT into an `await`: the handler writes a byte to a pipe (about
/// all a signal handler may do), a thread waits on the pipe's other end.
final class SignalPipe: Sendable {
  nonisolated(unsafe) static var writeEnd: Int32 = -1
  private let readEnd: Int32

  init(signals: [Int32]) {
    var ends: [Int32] = [-1, -1]
    _ = tokenctl_pipe2(&ends, O_CLOEXEC)
    readEnd = ends[0]
    Self.writeEnd = ends[1]
    for signal in signals {
      var action = sigaction()
      action.__sigaction_handler.sa_handler = { _ in
        var byte: UInt8 = 1
        _ = write(SignalPipe.writeEnd, &byte, 1)
      }
      sigemptyset(&action.sa_mask)
      action.sa_flags = SA_RESTART
      sigaction(signal, &action, nil)
    }
  }

  /// Stops as a signal would.
  static func trigger() {
    var byte: UInt8 = 1
    _ = write(writeEnd, &byte, 1)
  }

  /// Returns once a signal came.
  func wait() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let started = DetachedThread.start { [readEnd] in
        var byte: UInt8 = 0
        while read(readEnd, &byte, 1) < 0 && errno == EINTR {}
        continuation.resume()
      }
      if !started { continuation.resume() }
    }
  }
}
