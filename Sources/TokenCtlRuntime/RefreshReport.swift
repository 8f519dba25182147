import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the refresh child tells its parent: success, or the error to report. It never
/// holds a token: the parent reads the new tokens from the keyring, where the child put
/// them.
public struct RefreshReport: Codable, Sendable, Hashable {
  /// The error's code, as `TokenKitError.Code.description` names it; nil on success.
  public var code: String?
  public var message: String?
  public var recovery: String?
  /// The error's remedy, a fact the parent words as it words its own errors.
  public var remedy: TokenKitError.Remedy?
  /// Failures that did not stop the refresh (an ID token dropped), for the parent to show.
  public var warnings: [String]?
  /// The error's `retryAfter`, in seconds.
  public var retryAfter: Double?

  /// More than any report; a child writing more is not ours.
  static let maximumSize = 64 * 1024

  /// The report of a refresh that ended with `error` (nil: success), as one JSON line.
  public static func encode(_ error: TokenKitError?, warnings: [String] = []) -> [UInt8] {
    let report = RefreshReport(
      code: error?.code.description, message: error?.message, recovery: error?.recovery, remedy: error?.remedy,
      warnings: warnings.isEmpty ? nil : warnings, retryAfter: error?.retryAfter)
    return Array((try? JSONEncoder().encode(report)) ?? Data("{}".utf8)) + [10]
  }

  /// The warnings `bytes` report; throws the error it reports, or one saying the child
  /// failed without a report.
  static func decode(_ bytes: [UInt8], exitStatus: Int32, key: AccountKey) throws -> [String] {
    guard let report = try? JSONDecoder().decode(RefreshReport.self, from: Data(bytes)) else {
      let how = exitStatus & 0x7f == 0 ? "exit status \((exitStatus >> 8) & 0xff)" : "signal \(exitStatus & 0x7f)"
      throw TokenKitError(
        .internalFailure, "the process refreshing \(key) ended without saying how it went (\(how))",
        remedy: .refreshAlone(account: "\(key)"))
    }
    guard let name = report.code else { return report.warnings ?? [] }
    var error = TokenKitError(
      TokenKitError.Code(name: name) ?? .internalFailure, report.message ?? "the refresh of \(key) failed",
      recovery: report.recovery, remedy: report.remedy)
    error.retryAfter = report.retryAfter
    throw error
  }
}
