import NativeAppSupport
import TokenCtlRuntime

/// Output for a command run on the user's terminal from inside another program's
/// pipes: results and messages alike go to the terminal, so nothing reaches the pipe git
/// reads the helper's answer from.
struct TerminalOutput: OutputSink {
  let terminal: any UserTerminal

  func write(_ text: String) { terminal.write(text) }
  func writeError(_ text: String) { terminal.write(text) }
  var isTerminal: Bool { true }
}
