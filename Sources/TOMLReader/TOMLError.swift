/// Why ``TOMLParser`` refused a document: where, and what it expected there.
///
/// The reason quotes keys, never values: a value may be a client secret. A caller that
/// reports the error as its own keeps ``message`` whole, since `source:line:column:` is
/// the form editors and terminals jump to.
public struct TOMLError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The name the document was parsed under, its `source`: a file path.
  public var source: String
  /// Where the problem is.
  public var position: TOMLPosition
  /// What is wrong, without the place: "expected '=' after key 'client_id'".
  public var reason: String

  public init(source: String, position: TOMLPosition, reason: String) {
    self.source = source
    self.position = position
    self.reason = reason
  }

  /// `source:line:column: reason`.
  public var message: String { "\(source):\(position): \(reason)" }

  public var description: String { message }
}
