import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TokenAgent

/// The agent's connection threads: a thread that is done takes the next
/// connection, up to the number kept; connections at once still get a thread each.
@Suite struct ConnectionThreadsTests {
  /// Waits (on a thread of its own, never the test pool's) until `condition` holds.
  static func eventually(_ condition: @escaping @Sendable () -> Bool) async throws -> Bool {
    try await onOwnThread {
      for _ in 0..<2000 {
        if condition() { return true }
        usleep(5000)
      }
      return false
    }
  }

  /// The kernel's id of the calling thread (`/proc/thread-self` is `PID/task/TID`), which
  /// unlike a `pthread_t` is not handed to the next thread as soon as one ends.
  static func tid() -> pid_t {
    let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
    return pid_t(link.split(separator: "/").last ?? "") ?? -1
  }

  /// Runs `body` on `threads` and returns the id of the thread it ran on, once it ended.
  static func threadOf(_ threads: ConnectionThreads, _ body: @escaping @Sendable () -> Void = {}) async throws -> pid_t
  {
    let ran = Mutex<pid_t?>(nil)
    #expect(
      threads.run {
        body(); ran.withLock { $0 = Self.tid() }
      })
    #expect(try await eventually { ran.withLock { $0 != nil } })
    return try #require(ran.withLock { $0 })
  }

  @Test func aThreadThatIsDoneServesTheNextConnection() async throws {
    let threads = ConnectionThreads(kept: 2)
    let first = try await Self.threadOf(threads)
    #expect(try await Self.eventually { threads.parkedThreads == 1 })
    let second = try await Self.threadOf(threads)
    let third = try await Self.threadOf(threads)
    #expect(second == first && third == first, "one thread served all three in turn")
    #expect(try await Self.eventually { threads.parkedThreads == 1 })
  }

  @Test func connectionsAtOnceGetAThreadEachAndOnlyTheKeptOnesStay() async throws {
    let threads = ConnectionThreads(kept: 2)
    let release = Mutex(false)
    let running = Mutex<Set<pid_t>>([])
    for _ in 0..<4 {
      #expect(
        threads.run {
          running.withLock { _ = $0.insert(Self.tid()) }
          while !release.withLock({ $0 }) { usleep(1000) }
        })
    }
    // Four held at once: four threads, none waiting for another to finish.
    #expect(try await Self.eventually { running.withLock { $0.count } == 4 })
    release.withLock { $0 = true }
    #expect(try await Self.eventually { threads.parkedThreads == 2 })
    // The two beyond `kept` ended: a fifth and sixth at once find two parked threads.
    let again = Mutex<Set<pid_t>>([])
    let hold = Mutex(true)
    for _ in 0..<2 {
      #expect(
        threads.run {
          again.withLock { _ = $0.insert(Self.tid()) }
          while hold.withLock({ $0 }) { usleep(1000) }
        })
    }
    #expect(try await Self.eventually { again.withLock { $0.count } == 2 })
    #expect(again.withLock { $0 }.isSubset(of: running.withLock { $0 }))
    hold.withLock { $0 = false }
  }
}
