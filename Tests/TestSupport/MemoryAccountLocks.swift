import Synchronization
import TokenKit

/// Account locks within one process, by polling like `FileAccountLocks` does, that record
/// how many holders there ever were at once.
public final class MemoryAccountLocks: AccountLocking, Sendable {
  private struct State {
    var held: Set<String> = []
    var acquisitions = 0
  }
  private let state = Mutex(State())

  public init() {}

  public func acquire(_ key: AccountKey, group: String, timeout: Duration) async throws -> any AccountLockHandle {
    let name = "\(group)\u{0}\(key.type)\u{0}\(key.id)"
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while true {
      let acquired = state.withLock { state in
        guard !state.held.contains(name) else { return false }
        state.held.insert(name)
        state.acquisitions += 1
        return true
      }
      if acquired { return Handle(locks: self, name: name) }
      guard ContinuousClock.now < deadline else {
        throw TokenKitError(.internalFailure, "lock \(key) timed out")
      }
      try await Task.sleep(for: .milliseconds(1))
    }
  }

  public func isHeld(_ key: AccountKey, group: String) -> Bool {
    state.withLock { $0.held.contains("\(group)\u{0}\(key.type)\u{0}\(key.id)") }
  }

  public var acquisitions: Int { state.withLock { $0.acquisitions } }
  public var isHeld: Bool { state.withLock { !$0.held.isEmpty } }

  fileprivate func release(_ name: String) { _ = state.withLock { $0.held.remove(name) } }

  private final class Handle: AccountLockHandle, Sendable {
    let locks: MemoryAccountLocks
    let name: String
    let released = Mutex(false)
    init(locks: MemoryAccountLocks, name: String) {
      self.locks = locks
      self.name = name
    }
    func release() {
      let first = released.withLock { released in
        defer { released = true }
        return !released
      }
      if first { locks.release(name) }
    }
  }
}
