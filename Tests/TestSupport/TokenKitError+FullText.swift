import TokenKit

extension TokenKitError {
  /// The message and the recovery, for assertions that a secret appears in neither.
  public var fullText: String { message + "\n" + (recovery ?? "") }
}
