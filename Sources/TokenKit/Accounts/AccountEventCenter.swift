import Synchronization

/// Publishes account events to any number of subscribers, each an `AsyncSequence`, and to
/// observers called synchronously (the hook command).
public final class AccountEventCenter: Sendable {
  private struct State {
    var nextID = 0
    var continuations: [Int: AsyncStream<AccountEvent>.Continuation] = [:]
    var observers: [@Sendable (AccountEvent) -> Void] = []
  }
  private let state = Mutex(State())

  public init() {}

  /// A new sequence of the events published from now on. It ends when the subscriber
  /// stops iterating, or when the center is deinitialized.
  public func events() -> AsyncStream<AccountEvent> {
    let (stream, continuation) = AsyncStream<AccountEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
    let id = state.withLock { state in
      defer { state.nextID += 1 }
      state.continuations[state.nextID] = continuation
      return state.nextID
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
    }
    return stream
  }

  /// Calls `observer` with every event published from now on, on the publishing task.
  public func observe(_ observer: @escaping @Sendable (AccountEvent) -> Void) {
    state.withLock { $0.observers.append(observer) }
  }

  public func publish(_ event: AccountEvent) {
    let (continuations, observers) = state.withLock { (Array($0.continuations.values), $0.observers) }
    for continuation in continuations { continuation.yield(event) }
    for observer in observers { observer(event) }
  }

  deinit {
    for continuation in state.withLock({ Array($0.continuations.values) }) { continuation.finish() }
  }
}
