import AccountTypeFiles
import TOMLReader
import TokenKit

/// A user's account type file (tokenctl-types(5)): the TOML parser, then the descriptor
/// reader, as `tokenctl types --check` and every command that loads the types run them.
enum DescriptorFuzzing {
  /// Labels: `descriptor` (a usable account type), `toml` (a TOML document that is not
  /// one), `refused` (not TOML that the parser accepts).
  static func run(_ bytes: [UInt8]) -> String {
    let problems: [String]
    do {
      let descriptor = try DescriptorFile.parse(bytes, source: "fuzz.toml")
      precondition(!descriptor.id.isEmpty, "a descriptor without an id")
      return "descriptor"
    } catch {
      problems = error.problems
    }
    precondition(!problems.isEmpty, "a descriptor file refused without a reason")
    do {
      _ = try TOMLParser.parse(bytes, source: "fuzz.toml")
      return "toml"
    } catch {
      // The TOML error is the one problem the file reader reports, with its position.
      precondition(problems.count == 1 && problems[0].hasPrefix("fuzz.toml:"), "a TOML error without its place")
      return "refused"
    }
  }
}
