import Foundation
import Testing

@testable import SecretServiceStore

/// The table of providers' quirks is the one place they are described, and each is coped
/// with somewhere: every case is named in the store's code outside the table, so that a
/// reader of the table finds the code, and a reader of the code the reason.
@Suite struct SecretServiceQuirkTests {
  static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../Sources/SecretServiceStore").standardized

  @Test(arguments: SecretServiceQuirk.allCases)
  func eachQuirkIsNamedWhereItIsCopedWith(_ quirk: SecretServiceQuirk) throws {
    let name = "\(quirk)"
    let files = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path)
      .filter { $0.hasSuffix(".swift") && $0 != "SecretServiceQuirk.swift" }
    let naming = try files.filter { file in
      let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
      return text.contains("SecretServiceQuirk/\(name)") || text.contains("SecretServiceQuirk.\(name)")
    }
    #expect(!naming.isEmpty, "no code names SecretServiceQuirk.\(name)")
    #expect(!quirk.providers.isEmpty)
  }
}
