/// A place in a TOML document: a 1-based line and column, as editors show them.
///
/// Columns count Unicode scalars, not bytes, so a position after `é` is where the cursor
/// is. Values built in code rather than parsed carry line 0, column 0.
public struct TOMLPosition: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The line, from 1; a CRLF ends a line like an LF.
  public var line: Int
  /// The column, from 1, in Unicode scalars.
  public var column: Int

  public init(line: Int, column: Int) {
    self.line = line
    self.column = column
  }

  /// The position of values that were not parsed from a document.
  public static let unknown = TOMLPosition(line: 0, column: 0)

  /// `line:column`, the form compilers use, so editors and terminals can jump to it.
  public var description: String { "\(line):\(column)" }

  public static func < (lhs: TOMLPosition, rhs: TOMLPosition) -> Bool {
    (lhs.line, lhs.column) < (rhs.line, rhs.column)
  }
}
