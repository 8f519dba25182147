import ArgumentParser
import TokenKit

/// `--scope`, shared by the commands that use an account's token: a token for other
/// scopes than the account's own, from its sign-in (RFC 6749 §6).
struct ScopeOption: ParsableArguments {
  @Option(
    name: .customLong("scope"),
    help: ArgumentHelp(
      "Use a token for exactly these scopes, from the account's sign-in, instead of its own; repeatable, "
        + "or several separated by spaces.", valueName: "scope"))
  var values: [String] = []

  /// The scopes asked for; nil when none were.
  var scopes: ScopeSet? {
    ScopeSet(values.flatMap { $0.split(separator: " ").map(String.init) })
  }

  func validate() throws {
    let scopes = values.flatMap { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
    if !values.isEmpty, scopes.isEmpty { throw ValidationError("--scope needs at least one scope.") }
    if let bad = scopes.first(where: { !OAuthSyntax.isScopeToken($0) }) {
      throw ValidationError(
        "'\(TerminalSafe.text(bad))' is not a scope: scopes are printable ASCII without spaces, '\"' or '\\'.")
    }
  }
}
