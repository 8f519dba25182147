/// A failure in a test's own setup (a server that did not start, a program that is not
/// installed), as opposed to a failed expectation: the one error the test helpers throw.
public struct TestFailure: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
