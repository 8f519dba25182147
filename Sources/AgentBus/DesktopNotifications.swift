import GLibBus
import ProcessRuntime
import Synchronization

/// Desktop notifications with actions (`org.freedesktop.Notifications`), for the agent's
/// questions (may this application have a token?) and news (an account needs a sign-in).
///
/// Only a notification server already running is used: calls carry NO_AUTO_START, so a
/// headless machine never gets one started for us, and gets no notification.
///
/// An answer counts only from the server that showed the question. Any connection on
/// the bus can emit `ActionInvoked`, and notification ids are small and sequential, so
/// a program the user refused could otherwise answer *Allow* for the user. So each
/// notification goes to the unique name that owned `org.freedesktop.Notifications` when
/// it was raised (resolved with `GetNameOwner`, as xdg-desktop-portal resolves its
/// backends), and only that name's signals answer it: the bus daemon sets every
/// message's sender, which no client can forge.
public final class DesktopNotifications: @unchecked Sendable {
  static let name = "org.freedesktop.Notifications"
  static let path = "/org/freedesktop/Notifications"

  /// A notification on screen: the unique name of the server that showed it, and the id
  /// that server gave it.
  public struct Shown: Sendable, Hashable {
    public var server: String
    public var id: UInt32
  }

  private let service: AgentBusService
  /// What to do when the user answers a notification, or closes it (nil).
  private let waiting = Mutex<[Shown: @Sendable (String?) -> Void]>([:])

  /// Listens for the answers to our notifications, on the service's thread; call before
  /// ``AgentBusService/start()``.
  public init(service: AgentBusService) {
    self.service = service
    // Every sender: the server's unique name changes when it restarts, and each signal's
    // sender is checked against the notification's own server in `heard`.
    for signal in ["ActionInvoked", "NotificationClosed"] {
      service.loop.subscribe(on: service.bus, sender: nil, interface: Self.name, member: signal, path: Self.path) {
        [weak self] signal in
        self?.heard(signal)
      }
    }
  }

  /// Shows a notification with `actions` (key, label) and calls `answered` with the key
  /// of the action the user took, or nil when the notification was closed. Returns the
  /// notification; nil when no notification server runs (and `answered` is never called).
  @discardableResult
  public func show(
    summary: String, body: String, actions: [(key: String, label: String)], critical: Bool = false,
    answered: @escaping @Sendable (String?) -> Void = { _ in }
  ) -> Shown? {
    let parameters = BusValue.tuple([
      .string("tokenctl"), .uint32(0), .string("dialog-password"), .string(summary), .string(body),
      .strings(actions.flatMap { [$0.key, $0.label] }),
      .dictionary(critical ? [("urgency", .byte(2))] : []),
      .int32(-1),
    ])
    guard let server = owner() else { return nil }
    // Under the lock, so that an answer that comes at once finds its handler.
    return waiting.withLock { waiting -> Shown? in
      guard
        case .tuple(let reply)? = try? service.bus.call(
          server, Self.path, Self.name, "Notify", parameters, replyType: "(u)", autoStart: false,
          timeout: AgentBusService.callTimeout),
        case .uint32(let id)? = reply.first
      else { return nil }
      let shown = Shown(server: server, id: id)
      waiting[shown] = answered
      return shown
    }
  }

  /// The unique name of the notification server running now; nil when there is none.
  private func owner() -> String? {
    guard
      case .tuple(let reply)? = try? service.bus.callBus(
        "GetNameOwner", .tuple([.string(Self.name)]), replyType: "(s)", timeout: AgentBusService.callTimeout),
      case .string(let owner)? = reply.first
    else { return nil }
    return owner
  }

  /// What came of a question.
  public enum Outcome: Sendable, Equatable {
    /// The key of the action the user took.
    case answered(String)
    /// Closed, or left unanswered for the whole wait.
    case unanswered
  }

  /// Asks with a notification and waits for the answer, at most `timeout`; nil when no
  /// notification server runs, so nobody was asked.
  ///
  /// The question is taken off the screen when it ends, however it ends: answered (a
  /// daemon such as dunst leaves a notification up after its action), unanswered at the
  /// timeout, or withdrawn because the task was cancelled (the user decided another way,
  /// with `tokenctl allow`). A question left up would offer an answer that no longer counts.
  public func ask(
    summary: String, body: String, actions: [(key: String, label: String)], timeout: Duration
  ) async -> Outcome? {
    let question = Question()
    return await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Outcome?, Never>) in
        question.begin(continuation)
        let shown = show(summary: summary, body: body, actions: actions) { answer in
          question.end(answer.map(Outcome.answered) ?? .unanswered)
        }
        guard let shown else {
          question.end(nil)
          return
        }
        if question.showed(shown) { withdraw(shown) }
        Task(executorPreference: ThreadPoolExecutor.shared) { [self] in
          try? await DeadlineTimer.shared.sleep(for: timeout)
          if question.end(.unanswered) { withdraw(shown) }
        }
      }
    } onCancel: {
      if let shown = question.cancel() { withdraw(shown) }
    }
  }

  /// Forgets a question nobody answered and takes it off the screen.
  private func withdraw(_ shown: Shown) {
    waiting.withLock { _ = $0.removeValue(forKey: shown) }
    close(shown)
  }

  /// Takes a notification off the screen.
  public func close(_ shown: Shown) {
    _ = try? service.bus.call(
      shown.server, Self.path, Self.name, "CloseNotification", .tuple([.uint32(shown.id)]), replyType: nil,
      autoStart: false, timeout: AgentBusService.callTimeout)
  }

  /// On the service's thread: `ActionInvoked (u id, s key)` or `NotificationClosed (u id,
  /// u reason)` from its sender, a unique name. An action is followed by a close; the
  /// first of them answers, if it comes from the server that showed the notification.
  private func heard(_ heard: DBusSignal) {
    let (signal, sender) = (heard.member, heard.sender)
    guard case .tuple(let body) = heard.body, body.count == 2, case .uint32(let id) = body[0] else { return }
    var key: String?
    if signal == "ActionInvoked" {
      guard case .string(let action) = body[1] else { return }
      key = action
    }
    let (handler, forged) = waiting.withLock { waiting in
      (waiting.removeValue(forKey: Shown(server: sender, id: id)), waiting.keys.contains { $0.id == id })
    }
    guard let handler else {
      // Another server's notification of the same number is no concern of ours; a signal
      // that matches only our id is someone answering in the user's name.
      if forged { service.log("ignored \(signal) for notification \(id) from \(sender), which did not show it") }
      return
    }
    // Off the bus thread: a handler may call the bus (and wait for its reply). An answered
    // notification is closed: dunst, for one, leaves it up with its actions still offered.
    let shown = Shown(server: sender, id: id)
    Task(executorPreference: ThreadPoolExecutor.shared) { [self] in
      if key != nil { close(shown) }
      handler(key)
    }
  }

  /// One question's wait: ended once, by the answer, the timeout or the caller's
  /// cancellation, whichever comes first, even when the cancellation comes before the
  /// notification is on screen.
  private final class Question: Sendable {
    private struct State {
      var continuation: CheckedContinuation<Outcome?, Never>?
      var shown: Shown?
      var ended = false
      var cancelled = false
    }
    private let state = Mutex(State())

    func begin(_ continuation: CheckedContinuation<Outcome?, Never>) {
      state.withLock { $0.continuation = continuation }
    }

    /// Ends the wait with `outcome`; true for the first end only.
    @discardableResult
    func end(_ outcome: Outcome?) -> Bool {
      let continuation = state.withLock { state -> CheckedContinuation<Outcome?, Never>? in
        guard !state.ended else { return nil }
        state.ended = true
        defer { state.continuation = nil }
        return state.continuation
      }
      continuation?.resume(returning: outcome)
      return continuation != nil
    }

    /// Notes the notification on screen; true when the caller was cancelled meanwhile, so
    /// that it must come off again (the wait is then over).
    func showed(_ shown: Shown) -> Bool {
      let cancelled = state.withLock { state in
        state.shown = shown
        return state.cancelled
      }
      return cancelled && end(.unanswered)
    }

    /// Ends the wait for a cancelled caller; the notification to take off the screen, if
    /// it is up and nothing else ended the wait.
    func cancel() -> Shown? {
      let shown = state.withLock { state in
        state.cancelled = true
        return state.shown
      }
      guard let shown, end(.unanswered) else { return nil }
      return shown
    }
  }
}
