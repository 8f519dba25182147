import TokenKit

/// `tokenctl login ACCOUNT`: signing in to a kept account again as it signed in before.
///
/// The account records how it signed in, none of it secret: its type, the issuer that
/// vouched for it, the client its tokens were issued to, and the scopes it was granted.
/// An account signed in with `--issuer` and `--client-id` has no client of its type's,
/// so `tokenctl login TYPE` cannot sign it in again; this can, and it is what every hint
/// to sign in again names.
struct SignInAgain {
  /// The account to sign in to again.
  let account: Account

  /// The account `word` names when it names one rather than an account type, else nil: a
  /// type id is a type (`tokenctl login oidc`), and a word that names neither is left for
  /// the caller to report as the unknown type it may have been meant as. `TYPE:NAME` that
  /// names no account is an error of its own, since it cannot have meant a type.
  static func account(named word: String, registry: AccountTypeRegistry, store: some TokenStore) throws -> Account? {
    guard !readsAsType(word, registry: registry) else { return nil }
    let reference = AccountReference(parsing: word, knownTypes: Set(registry.ids))
    do {
      return try reference.resolve(in: store).account
    } catch let error as TokenKitError where error.code == .noSuchAccount && reference.type == nil {
      return nil
    }
  }

  /// Whether `login` reads `word` as an account type rather than an account: a type id
  /// always is one (shell completion offers accounts by this rule too).
  static func readsAsType(_ word: String, registry: AccountTypeRegistry) -> Bool { registry.entry(word) != nil }

  /// `options` (what the user gave on the command line) completed with what the account
  /// recorded, what the user gave winning: the account's issuer for a type that takes
  /// one per sign-in, its client unless it is the one tokenctl registered at that issuer
  /// (which the sign-in finds itself, with its secret and port), its scopes with the
  /// type's defaults (a server need not list in `scope` what it always grants, such as
  /// `offline_access`), and its name as the login hint.
  func options(
    completing options: SignInOptions, descriptor: EndpointDescriptor,
    registeredClientID: (_ userIssuer: String?) throws -> String?
  ) rethrows -> SignInOptions {
    var options = options
    if options.issuer == nil, descriptor.endpoints == .discoveredFromUserIssuer { options.issuer = account.issuer }
    if options.clientID == nil, let recorded = account.clientID, recorded != descriptor.clientID {
      if try recorded != registeredClientID(options.issuer) { options.clientID = recorded }
    }
    if options.scopes == nil, !account.isServiceAccount, !account.scopes.isEmpty {
      var scopes = descriptor.defaultScopes
      for scope in account.scopes where !scopes.contains(scope) { scopes.append(scope) }
      options.scopes = scopes
    }
    if options.loginHint == nil, !account.isServiceAccount { options.loginHint = account.name }
    return options
  }
}
