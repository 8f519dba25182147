extension TokenKitError {
  /// What the user can do about an error, as a fact: which account, type, setting or
  /// action is involved, never how a particular front end spells it.
  ///
  /// A command line words it as a command to run, an app as the button to press, so the
  /// core names no command, flag or configuration file. `advice` is a plain sentence for a
  /// front end with no words of its own. Codable, so that it crosses the pipe from a
  /// refresh child to its parent as a fact too.
  public enum Remedy: Sendable, Hashable, Codable {
    /// Sign in to an account of `type` again; nil: of the type just tried. `device`: with
    /// the device authorization grant (RFC 8628) again.
    case signIn(type: String?, device: Bool)
    /// Sign in again to the account `account` (`TYPE:NAME`, or `TYPE:ID` where another
    /// account of the type shares the name) of `group`, as it signed in before: at its
    /// issuer, with its client and scopes, naming the user to the server so that a person
    /// signed in there as several users is not asked to pick (OpenID Connect Core
    /// §3.1.2.1 `login_hint`). The account records all of these.
    case signInAgain(account: String, group: String)
    /// Sign in again and allow the access asked for, or have an administrator allow the app.
    case allowAccess(type: String?)
    /// The server wants consent to `asked` before it issues a token for them from
    /// `account` (named as in ``signInAgain(account:group:)``), which was granted
    /// `granted`: an administrator grants it for the app, or the user signs in to the
    /// account again asking for both and consents.
    case consentToScopes(account: String, granted: [String], asked: [String])
    /// Sign in again and finish in the browser, or with a method that needs no redirect to
    /// this machine (pasting the address, the device grant).
    case finishSignIn(type: String?)
    /// Sign in to `type` another way: with the device grant (`device`), or with the
    /// browser or by pasting the redirected address; the server (the issuer, or the type's
    /// fixed endpoints), or its client, does not support the way just tried.
    case signInAnotherWay(type: String, device: Bool)
    /// No account by the name given: see which accounts `group` holds (nil: the group
    /// just searched).
    case listAccounts(group: String?)
    /// The server could not be told of the sign-out: try later, or forget `account` on
    /// this machine only.
    case forgetLocally(account: String)
    /// The stored item cannot be read: remove the account without reading its tokens,
    /// then sign in again.
    case removeUnreadableAccount
    /// `setting` (a key of the type's settings, such as `client_id`) is missing for `type`.
    case configure(type: String, setting: String)
    /// A token was not sent to `origin`, which the account type does not serve; the user
    /// may allow it for one request.
    case allowOrigin(String)
    /// Ask for `scope`, without which the server does not say who signed in.
    case requestScope(String)
    /// The server wants a scope named where none was asked for (RFC 6749 §4.4.2 lets a
    /// client name none): name the one its administrator set up for the client, for this
    /// sign-in to `type` or in the type's settings.
    case nameScope(type: String)
    /// There is no type of the id given; these are known.
    case chooseType(known: [String])
    /// The issuer registers no client for us (RFC 7591): register a public client with the
    /// loopback redirect by hand, and configure its id for `type`.
    case registerClient(type: String)
    /// The stored client registration cannot be read: forget it, and the next sign-in
    /// registers again.
    case forgetRegistration(issuer: String)
    /// The server refused a token for `asked` from `account` (named as in
    /// ``signInAgain(account:group:)``): ask only for scopes of `granted`, what the sign-in
    /// granted, or sign in to the account again asking for both.
    case requestGrantedScopes(account: String, granted: [String], asked: [String])
    /// The issuer was named otherwise than its server names itself: name it `issuer`, as
    /// the server does, wherever it was given.
    case nameIssuer(String)
    /// A name matched several accounts: name one of `candidates` (`TYPE:ACCOUNT-ID`)
    /// instead. Ids are the provider's, and may hold any character.
    case nameOneAccount(candidates: [String])
    /// Another program holds the loopback port the redirect needs: stop it (`finder`, a
    /// shell command, names it) and try again, or sign in a way that needs no redirect.
    case freeRedirectPort(finder: String)
    /// Nothing was pasted: paste the redirected address where a person can type it, or
    /// sign in another way.
    case pasteAtATerminal
    /// A refresh in a process of its own ended without a word: refresh `account` (named as
    /// in ``signInAgain(account:group:)``) by itself to see what fails.
    case refreshAlone(account: String)

    /// The remedy in plain words, naming no front end's commands.
    public var advice: String {
      switch self {
      case .signIn(_, let device):
        device ? "Start the device sign-in again." : "Sign in again."
      case .signInAgain(let account, _):
        "Sign in to \(account) again."
      case .allowAccess:
        "Sign in again and allow access, or ask the administrator to allow this app."
      case .consentToScopes(_, _, let asked):
        "Ask an administrator to grant this app consent to \(asked.joined(separator: " ")), or sign in again asking "
          + "for them and consent."
      case .finishSignIn:
        "Sign in again and finish in the browser, or sign in another way if the browser cannot reach this computer."
      case .signInAnotherWay(_, let device):
        device
          ? "Sign in with the device grant, where the server offers it."
          : "Sign in with the browser, or by pasting the redirected address."
      case .listAccounts:
        "The account may have been signed out."
      case .forgetLocally:
        "Try again later, or forget the account on this computer only."
      case .removeUnreadableAccount:
        "Remove the account without reading its tokens, and sign in again."
      case .configure(let type, let setting):
        "Set \(setting) for the account type '\(type)'."
      case .allowOrigin(let origin):
        "Allow \(origin) for this request only if you trust it with this token."
      case .requestScope(let scope):
        "Request the \(scope) scope, or use an account type that knows how to look up the user."
      case .nameScope:
        "Ask for the scope the server's administrator set up for this client, for this sign-in or in the account "
          + "type's settings."
      case .chooseType(let known):
        "Known types: \(known.joined(separator: ", "))."
      case .registerClient(let type):
        "Register a public client (no secret) with the redirect URI http://127.0.0.1/ (any port) with the provider, "
          + "then set its client id for the account type '\(type)'."
      case .forgetRegistration(let issuer):
        "Forget the client registered at \(issuer) on this computer; the next sign-in registers again."
      case .nameIssuer(let issuer):
        "Name the issuer exactly as its server does: \(issuer)."
      case .nameOneAccount:
        "Name one as TYPE:ACCOUNT-ID, as listed above."
      case .freeRedirectPort(let finder):
        "Stop the program holding the port (`\(finder)` names it) and try again, or sign in another way."
      case .pasteAtATerminal:
        "Paste the redirected address where you can type it, or sign in another way."
      case .refreshAlone(let account):
        "Refresh \(account) by itself to see what fails."
      case .requestGrantedScopes(_, let granted, _):
        "Ask only for scopes the sign-in granted (\(granted.joined(separator: " "))), or sign in again asking for "
          + "the others too."
      }
    }
  }
}
