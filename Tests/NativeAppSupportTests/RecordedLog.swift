import Synchronization

/// The lines a listener logs, recorded from whichever thread it logs on.
final class RecordedLog: Sendable {
  private let recorded = Mutex<[String]>([])

  var lines: [String] { recorded.withLock { $0 } }

  func record(_ line: String) { recorded.withLock { $0.append(line) } }
}
