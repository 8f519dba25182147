import ArgumentParser
import TokenKit

/// `--group`, shared by every command that touches the store.
struct GroupOption: ParsableArguments {
  @Option(
    name: .long,
    help: ArgumentHelp(
      "The group whose accounts to use (default: $TOKENCTL_GROUP, else '\(Account.defaultGroup)').",
      valueName: "group"))
  var group: String?

  /// The store of the chosen group.
  func store(in context: CLIContext) throws -> any TokenStore { try Self.store(group, in: context) }

  /// The store of `group`, else of the environment's group, else of the default one.
  static func store(_ group: String?, in context: CLIContext) throws -> any TokenStore {
    context.makeStore(try name(group, in: context))
  }

  /// `group`, else the environment's group, else the default one.
  static func name(_ group: String?, in context: CLIContext) throws -> String {
    let chosen = group ?? context.environment["TOKENCTL_GROUP"] ?? Account.defaultGroup
    guard !chosen.isEmpty else { throw ValidationError("The group name must not be empty.") }
    return chosen
  }
}

/// A command that can answer in JSON; its errors are then reported in JSON too.
protocol JSONOutputting {
  var json: Bool { get }
}
