import Synchronization

/// A flag set once, shared by callbacks that may run on any task.
final class SendableFlag: Sendable {
  private let value = Mutex(false)

  var isSet: Bool { value.withLock { $0 } }

  /// Sets the flag and returns whether it was already set.
  func testAndSet() -> Bool {
    value.withLock { value in
      defer { value = true }
      return value
    }
  }
}
