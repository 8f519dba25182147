import CredentialHelpers
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
    case .ruleForUnservedHost(let named, let host):
      let (problem, fix) = Self.ruleCannotApply(Self.naming(named), account: named.reference.description, host: host)
      return problem + ". " + fix
    case .ambiguous(let accounts, let host):
      let list = accounts.map { "  \($0.qualifiedName)" }.sorted().joined(separator: "\n")
      return "\(accounts.count) accounts serve \(host):\n\(list)\n"
        + "Choose one with TOKENCTL_ACCOUNT=TYPE:NAME, with a rule under [git.accounts] in config.toml, "
        + "or by putting it in the remote URL: https://NAME@\(host)/…"
    }
  }

  /// Why a `[credentials.accounts]` rule for `host` that names `account` never applies,
  /// and the two ways out; `get` and `doctor` say it in these words.
  static func ruleCannotApply(_ rule: String, account: String, host: String) -> (problem: String, fix: String) {
    (
      "\(rule) names \(account), whose type does not serve \(host): the rule never applies, and git gets no "
        + "token from tokenctl there",
      "Name an account of a type that serves \(host) (`tokenctl types` shows each type's git hosts), or define "
        + "a type that does: a type file with hosts = [\"\(host)\"] under [credentials] (tokenctl-types(5))"
    )
  }

  /// Who named an account, as the subject of a sentence.
  private static func naming(_ named: NamedAccount) -> String {
    switch named.source {
    case .environment: return "TOKENCTL_ACCOUNT"
    case .rule(let prefix): return "the rule for \(prefix) in config.toml"
    }
  }
}
