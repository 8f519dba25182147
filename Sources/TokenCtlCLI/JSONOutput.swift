#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The `--json` output: one document per command, with a format version that changes
/// only when a field's meaning changes. New fields may appear without a new version.
enum JSONOutput {
  static let formatVersion = 1

  static func render(_ document: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    // Every document is built from strings, numbers and arrays; encoding cannot fail.
    let data = try! encoder.encode(document)
    return String(decoding: data, as: UTF8.self) + "\n"
  }

  /// A document on one line, for a tool's protocol rather than a person (Docker's
  /// credential helpers, cargo's credential providers): keys sorted, so it is reproducible.
  static func compact(_ document: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Documents of strings and numbers only; encoding cannot fail.
    let data = try! encoder.encode(document)
    return String(decoding: data, as: UTF8.self) + "\n"
  }

  /// A timestamp as RFC 3339 UTC text.
  static func timestamp(_ date: Date) -> String {
    date.formatted(.iso8601)
  }
}
