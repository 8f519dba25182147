import Synchronization

/// A flag set once, shared by callbacks that run on any task.
final class SendableFlag: Sendable {
  private let value = Mutex(false)
  /// Sets the flag; returns whether it was set before.
  func testAndSet() -> Bool {
    value.withLock { value in
      defer { value = true }
      return value
    }
  }
}
