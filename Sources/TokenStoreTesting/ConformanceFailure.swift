/// A requirement of `TokenStoreConformance` that a store did not meet.
///
/// Checks throw it rather than use a test framework's assertions, so the suite runs under
/// Swift Testing, XCTest or none, and the library builds in any configuration.
public struct ConformanceFailure: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
