import TokenKit

/// Why a request that types of ours serve gets no answer. Each is worth telling the user,
/// since git will prompt or fail instead; how to say it is the front end's business.
public enum CredentialDecline: Sendable, Hashable {
  /// `types` serve `host`, but no account of theirs is signed in: the one reason a sign-in
  /// can fix.
  case noAccount(types: [String], host: String)
  /// The named account is not signed in.
  case notSignedIn(NamedAccount)
  /// The named account is signed in, but its type does not serve `host` (or, for a type
  /// that serves its issuer's host, it signed in to another instance).
  case doesNotServeHost(Account, namedBy: NamedAccount, host: String)
  /// A `[credentials.accounts]` rule of config.toml matched the request, but no type serves
  /// its host, so the account it names can never answer there: the user wrote the rule for
  /// this very host, and would otherwise never learn why it does nothing.
  case ruleForUnservedHost(NamedAccount, host: String)
  /// Several accounts serve `host` and nothing in the request or the configuration says
  /// which one.
  case ambiguous([Account], host: String)
}
