import Synchronization

/// Failures that did not stop a command: an account event `failed` published while the
/// command went on to succeed (an ID token dropped after a refresh, say). They are shown
/// as warnings once the command has succeeded; when it fails, its error says what matters.
///
/// Shared by reference, so that every copy of a ``CLIContext`` and the refresh child's
/// report feed the same log.
public final class WarningLog: Sendable {
  private let messages = Mutex<[String]>([])

  public init() {}

  func add(_ message: String) {
    messages.withLock { $0.append(message) }
  }

  /// The warnings so far, in order, and an empty log.
  func drain() -> [String] {
    messages.withLock { messages in
      defer { messages = [] }
      return messages
    }
  }
}
