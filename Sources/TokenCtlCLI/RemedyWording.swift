import TokenKit

/// The command line's words for the remedies the core reports as facts: the one place
/// where a hint names tokenctl's commands, flags and config.toml.
enum RemedyWording {
  /// The hint to print for `error`: its remedy in the command line's words, else the
  /// core's own recovery.
  static func recovery(for error: TokenKitError) -> String? {
    error.remedy.map { sentence($0, for: error.code) } ?? error.recovery
  }

  /// `remedy` in the command line's words; `code`, the error's, says why, where the words
  /// differ with it.
  static func sentence(_ remedy: TokenKitError.Remedy, for code: TokenKitError.Code? = nil) -> String {
    switch remedy {
    case .signIn(let type?, false) where code == .tokenNotValid:
      return "Run `\(login(type))` to get a new one."
    case .signIn(let type, true) where code == .accessDenied:
      return "Run `\(login(type)) --device` again and approve the request."
    case .signIn(let type, true) where code == .signInTimedOut:
      return "Run `\(login(type)) --device` again, and enter the new code sooner."
    case .signIn(let type, let device):
      let command = login(type) + (device ? " --device" : "")
      return type == nil || device ? "Run `\(command)` again." : "Run `\(command)`."
    case .signInAgain(let account, let group) where code == .tokenNotValid:
      return "Run `\(login(account: account, group: group))` to get a new one."
    case .signInAgain(let account, let group):
      return "Run `\(login(account: account, group: group))`."
    case .consentToScopes(let account, let granted, let asked):
      return "Ask an administrator to grant the app consent to \(asked.joined(separator: " ")), or sign in again "
        + "asking for them and consent: `\(login(account: account, granted: granted, asked: asked))`."
    case .allowAccess(let type):
      return "Run `\(login(type))` again and allow access, or ask the administrator to allow this app."
    case .finishSignIn(let type):
      return "Run `\(login(type))` again and finish signing in in the browser, or use --paste or --device if the "
        + "browser cannot reach this computer."
    case .signInAnotherWay(let type, let device):
      return device
        ? "Run `\(login(type)) --device`."
        : "Run `\(login(type)) --browser`, or `\(login(type)) --paste` over SSH."
    case .nameIssuer(let issuer):
      return "Name the issuer exactly as its server does: pass --issuer \(ShellWord.quoted(issuer)), or set issuer "
        + "to it in the type's table of config.toml."
    case .freeRedirectPort(let finder):
      return "Stop the program holding the port (`\(finder)` names it) and try again, or use --paste or --device."
    case .pasteAtATerminal:
      return "Run the command again in a terminal and paste the address there, or sign in with --browser or --device."
    case .refreshAlone(let account):
      return "Run `tokenctl refresh \(ShellWord.quoted(account))` to see what fails."
    case .nameOneAccount(let candidates):
      // Quoted where a shell would split or expand them (ids are the provider's: `|`, `$`).
      return "Name one as TYPE:ACCOUNT-ID: \(candidates.map(ShellWord.quoted).joined(separator: ", "))."
    case .listAccounts(nil):
      return "It may have been signed out. Run `tokenctl list` to see the accounts."
    case .listAccounts(let group?):
      return "Run `tokenctl list --group \(ShellWord.quoted(group))` to see the accounts there."
    case .forgetLocally(let account):
      return "Try again later, or run `tokenctl revoke --local \(ShellWord.quoted(account))` to forget it here only."
    case .removeUnreadableAccount:
      return "Remove the account with `tokenctl revoke` (which reads no token) and sign in again."
    case .configure(let type, "client_id"):
      return "Register an application with the provider, then pass --client-id or set client_id in the "
        + "[types.\(type)] table of config.toml; see tokenctl-providers(7)."
    case .configure(let type, "issuer"):
      return "Pass --issuer https://… or set issuer in the [types.\(type)] table of config.toml."
    case .configure(let type, let setting):
      return "Set \(setting) in the [types.\(type)] table of config.toml."
    case .allowOrigin(let origin):
      return "If you trust \(origin) with this token, pass --allow-host \(origin)."
    case .requestScope(let scope):
      return
        "Request the \(scope) scope (--scope \(scope) …), or use an account type that knows how to look up the user."
    case .nameScope(let type):
      return nameScope(type: type, signIn: login(type) + " --client-credentials")
    case .chooseType(let known):
      return "Known types: \(known.joined(separator: ", ")). Run `tokenctl types` for details."
    case .registerClient(let type):
      return "Register a public client (no secret) with the redirect URI http://127.0.0.1/ (any port, RFC 8252) in "
        + "the provider's console, then pass --client-id or set client_id in the [types.\(type)] table of "
        + "config.toml; tokenctl-providers(7) shows how for common providers."
    case .forgetRegistration(let issuer):
      return "Run `tokenctl unregister \(issuer) --local`; the next sign-in registers again."
    case .requestGrantedScopes(let account, let granted, let asked):
      return "Ask only for scopes the sign-in granted (\(granted.joined(separator: " "))), or sign in again asking for "
        + "them all: `\(login(account: account, granted: granted, asked: asked))`."
    }
  }

  /// The words of ``TokenKitError/Remedy/nameScope(type:)``, `signIn` being the command
  /// line that signed in (the options the user gave kept, where the command knows them).
  static func nameScope(type: String, signIn: String) -> String {
    "Ask for the scope the server's administrator set up for this client: add --scope and that scope to `\(signIn)`, "
      + "or set scopes in the [types.\(type)] table of config.toml."
  }

  /// Signing in to `account` again asking for the scopes it was granted and those asked
  /// for too, each once.
  private static func login(account: String, granted: [String], asked: [String]) -> String {
    var both = granted
    for scope in asked where !both.contains(scope) { both.append(scope) }
    return login(account: account) + both.map { " --scope \(ShellWord.quoted($0))" }.joined()
  }

  private static func login(_ type: String?) -> String {
    type.map { "tokenctl login \($0)" } ?? "tokenctl login"
  }

  /// `tokenctl login ACCOUNT`, which signs the account in again as it signed in before;
  /// the group named when it is not the default one, so that the command runs as shown
  /// wherever it is pasted.
  private static func login(account: String, group: String = Account.defaultGroup) -> String {
    let groupOption = group == Account.defaultGroup ? "" : " --group \(ShellWord.quoted(group))"
    return "tokenctl login \(ShellWord.quoted(account))\(groupOption)"
  }
}
