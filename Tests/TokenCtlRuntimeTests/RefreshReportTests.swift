import TestSupport
import Testing
import TokenKit

@testable import TokenCtlRuntime

/// What the parent makes of the refresh child's report: a child that failed
/// to report is tokenctl's own failure, not the keyring's.
@Suite struct RefreshReportTests {
  static let key = AccountKey(type: "corp", id: "user-42")

  @Test func aChildThatSaidNothingIsAnInternalFailure() {
    let error = #expect(throws: TokenKitError.self) {
      try RefreshReport.decode(Array("not a report".utf8), exitStatus: 3 << 8, key: Self.key)
    }
    #expect(error?.code.description == "internal-failure")
    #expect(error?.message == "the process refreshing corp:user-42 ended without saying how it went (exit status 3)")
  }

  /// A code this parent does not know (a newer child's) is still an error, of its own.
  @Test func anUnknownCodeIsAnInternalFailure() {
    let bytes = Array(#"{"code":"from-a-newer-tokenctl","message":"it broke"}"#.utf8)
    let error = #expect(throws: TokenKitError.self) {
      try RefreshReport.decode(bytes, exitStatus: 0, key: Self.key)
    }
    #expect(error?.code.description == "internal-failure")
    #expect(error?.message == "it broke")
  }

  /// Every code crosses as it was thrown, the keyring's among them.
  @Test(arguments: ["store-failure", "keyring-locked", "needs-sign-in"])
  func aKnownCodeCrossesAsItIs(name: String) throws {
    let code = try #require(TokenKitError.Code(name: name))
    let bytes = RefreshReport.encode(TokenKitError(code, "it failed"))
    let error = #expect(throws: TokenKitError.self) {
      try RefreshReport.decode(bytes, exitStatus: 0, key: Self.key)
    }
    #expect(error?.code == code && error?.message == "it failed")
  }
}
