import GitCredentialHelper
import TokenKit

extension CredentialDecline {
  /// What `tokenctl credential` says on standard error when it declines for this reason:
  /// the way out, in commands and settings of ours.
  var warning: String {
    switch self {
    case .noAccount(let types, let host):
      let logins = types.map { "tokenctl login \($0)" }.joined(separator: "' or '")
      return "no account for \(host): run '\(logins)' to sign in"
    case .notSignedIn(let named):
      return "\(Self.naming(named)) names \(named.reference), which is not signed in: "
        + "run 'tokenctl login \(named.reference.type ?? "TYPE")'"
    case .doesNotServeHost(let account, let named, let host):
      return "\(Self.naming(named)) names \(account.qualifiedName), whose type does not serve \(host); "
        + "not sending its token"
    case .ambiguous(let accounts, let host):
      let list = accounts.map { "  \($0.qualifiedName)" }.sorted().joined(separator: "\n")
      return "\(accounts.count) accounts serve \(host):\n\(list)\n"
        + "Choose one with TOKENCTL_ACCOUNT=TYPE:NAME, with a rule under [git.accounts] in config.toml, "
        + "or by putting it in the remote URL: https://NAME@\(host)/…"
    }
  }

  /// Who named an account, as the subject of a sentence.
  private static func naming(_ named: NamedAccount) -> String {
    switch named.source {
    case .environment: return "TOKENCTL_ACCOUNT"
    case .rule(let prefix): return "the rule for \(prefix) in config.toml"
    }
  }
}
