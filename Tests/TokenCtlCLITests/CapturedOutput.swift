import Synchronization
import TokenCtlCLI

/// An `OutputSink` that keeps what a command wrote, for in-process tests.
final class CapturedOutput: OutputSink {
  private let streams = Mutex<(out: String, err: String)>(("", ""))
  let isTerminal: Bool
  let errorIsTerminal: Bool
  init(isTerminal: Bool = false, errorIsTerminal: Bool? = nil) {
    self.isTerminal = isTerminal
    self.errorIsTerminal = errorIsTerminal ?? isTerminal
  }

  func write(_ text: String) { streams.withLock { $0.out += text } }
  func writeError(_ text: String) { streams.withLock { $0.err += text } }
  var stdout: String { streams.withLock { $0.out } }
  var stderr: String { streams.withLock { $0.err } }
}
