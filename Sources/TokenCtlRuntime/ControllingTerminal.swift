import NativeAppSupport
#if canImport(Glibc)
  import Glibc
#endif

/// A way to ask the user a question when standard input and output belong to another
/// program: git pipes its credential requests through a helper's standard streams.
public protocol UserTerminal: Sendable {
  func write(_ text: String)
  /// A line the user typed, or nil at the end of input.
  func readLine() -> String?
}

/// The process's controlling terminal, `/dev/tty`, where git's own prompts go too.
public final class ControllingTerminal: UserTerminal {
  private let descriptor: Int32

  /// Nil when the process has no controlling terminal (cron, CI, a GUI launcher), which
  /// is how a helper learns that nobody is there to ask.
  public init?() {
    // O_NOCTTY: asking must never make a terminal ours that was not already.
    let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
    guard descriptor >= 0 else { return nil }
    self.descriptor = descriptor
  }

  deinit { close(descriptor) }

  public func write(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
      let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else { return }
      bytes = bytes.dropFirst(written)
    }
  }

  public func readLine() -> String? { ManualPasteReceiver.readLine(from: descriptor) }
}
