/// Why a descriptor file (tokenctl-types(5)) could not be read: every problem found, each
/// as `source:line:column: message`, the form editors jump to.
public struct DescriptorFileError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The problems in file order; those without a place (a missing key) come last.
  public var problems: [String]

  public init(problems: [String]) {
    self.problems = problems
  }

  /// The problems, one per line.
  public var description: String { problems.joined(separator: "\n") }
}
