/// A failure in a test's own setup (a server that did not start), as opposed to a failed
/// expectation.
struct TestFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
