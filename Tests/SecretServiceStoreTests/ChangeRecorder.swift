import Foundation
import SecretServiceStore
import Synchronization

/// What a `KeyringChangeMonitor` reported, and on which threads, for a test to wait on.
final class ChangeRecorder: Sendable {
  private let state = Mutex<(changes: [KeyringChange], threads: Set<String>)>(([], []))

  var changes: [KeyringChange] { state.withLock { $0.changes } }
  /// The names of the threads `record` was called on.
  var threads: Set<String> { state.withLock { $0.threads } }

  func record(_ change: KeyringChange) {
    let thread = Self.currentThreadName()
    state.withLock {
      $0.changes.append(change)
      $0.threads.insert(thread)
    }
  }

  func reset() { state.withLock { $0.changes = [] } }

  /// Whether `change` was reported, or is within `bound`. Polls: the test waits on the
  /// monitor's thread, which it has no other way to join.
  func awaitChange(_ change: KeyringChange, within bound: Duration) -> Bool {
    let deadline = ContinuousClock.now + bound
    while !changes.contains(change) {
      guard ContinuousClock.now < deadline else { return false }
      usleep(10_000)
    }
    return true
  }

  /// Whether a change naming one item (an object path of a collection's) was reported,
  /// or is within `bound`.
  func awaitItemChange(within bound: Duration) -> Bool {
    let deadline = ContinuousClock.now + bound
    while !changes.contains(where: {
      if case .item(let path) = $0 { path.hasPrefix("/org/freedesktop/secrets/collection/") } else { false }
    }) {
      guard ContinuousClock.now < deadline else { return false }
      usleep(10_000)
    }
    return true
  }

  /// The names of this process's threads, as the kernel knows them.
  static func threadNames() -> Set<String> {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return Set(
      tasks.compactMap { task in
        (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
          .trimmingCharacters(in: .newlines)
      })
  }

  static func currentThreadName() -> String {
    ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?").trimmingCharacters(in: .newlines)
  }
}

/// Lets a monitor's own callback reach the monitor.
final class MonitorHolder: Sendable {
  private let value = Mutex<KeyringChangeMonitor?>(nil)

  var monitor: KeyringChangeMonitor? {
    get { value.withLock { $0 } }
    set { value.withLock { $0 = newValue } }
  }
}
