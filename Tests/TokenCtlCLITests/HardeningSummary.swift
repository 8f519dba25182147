import Foundation

/// Where the hardening tests leave their figures for `make hardening`'s table: one
/// tab-separated line per case, appended to `$HARDENING_SUMMARY` when it is set.
enum HardeningSummary {
  static func record(_ fields: String...) {
    guard let path = ProcessInfo.processInfo.environment["HARDENING_SUMMARY"], let file = fopen(path, "a") else {
      return
    }
    // One write with O_APPEND: lines from tests running in parallel never interleave.
    fputs(fields.joined(separator: "\t") + "\n", file)
    fclose(file)
  }
}
