import TokenKit

extension TokenCtl.Login {
  /// `error` with its way out as this very command line, the options the user gave (an
  /// issuer, a client id, scopes, a group) kept, so that the hint runs as shown: `tokenctl
  /// login TYPE` alone fails for a sign-in that needed `--issuer` and `--client-id`.
  ///
  /// With another method when the way just tried is one the type or its client does not
  /// support (after `unauthorized_client` for the device grant: `--browser`, or `--paste`
  /// over SSH); with the server's spelling of an issuer given otherwise (one that differs
  /// by a trailing slash).
  func offeringOtherWays(_ error: TokenKitError) -> TokenKitError {
    switch error.remedy {
    case .signIn(_, let device):
      let again = commandLine(with: device ? .device : method)
      let recovery =
        switch error.code {
        case .accessDenied: "Run `\(again)` again and approve the request."
        case .signInTimedOut where device: "Run `\(again)` again, and enter the new code sooner."
        default: "Run `\(again)` again."
        }
      return error.with(recovery: recovery, remedy: nil)
    case .finishSignIn:
      return error.with(
        recovery: "Run `\(commandLine(with: method))` again and finish signing in in the browser, or "
          + "`\(commandLine(with: .paste))` if the browser cannot reach this computer.",
        remedy: nil)
    case .allowAccess:
      return error.with(
        recovery: "Run `\(commandLine(with: method))` again and allow access, or ask the administrator to allow "
          + "this app.",
        remedy: nil)
    case .signInAnotherWay(_, let device):
      let recovery =
        device
        ? "Run `\(commandLine(with: .device))`."
        : "Run `\(commandLine(with: .browser))`, or `\(commandLine(with: .paste))` over SSH."
      return error.with(recovery: recovery, remedy: nil)
    case .nameScope(let type):
      return error.with(
        recovery: RemedyWording.nameScope(type: type, signIn: commandLine(with: .clientCredentials)), remedy: nil)
    case .nameIssuer(let named) where issuer != nil:
      return error.with(recovery: "Run `\(commandLine(with: method, issuer: named))`.", remedy: nil)
    default:
      return error
    }
  }

  /// This command line, quoted for a POSIX shell, with `method` for the one given and
  /// `issuer` for the one given.
  func commandLine(with method: Method?, issuer: String? = nil) -> String {
    var words = ["tokenctl", "login", type]
    if let clientID { words += ["--client-id", clientID] }
    for scope in scopes { words += ["--scope", scope] }
    if let issuer = issuer ?? self.issuer { words += ["--issuer", issuer] }
    if let loginHint { words += ["--login-hint", loginHint] }
    if let method { words.append(Self.flag(method)) }
    if noBrowser, method == nil || method == .browser { words.append("--no-browser") }
    if timeout != Self.defaultTimeout { words += ["--timeout", String(timeout)] }
    if let group = groupOption.group { words += ["--group", group] }
    return words.map(ShellWord.quoted).joined(separator: " ")
  }

  /// The flag that chooses `method`, as swift-argument-parser spells an enumerable flag.
  static func flag(_ method: Method) -> String {
    switch method {
    case .browser: "--browser"
    case .paste: "--paste"
    case .device: "--device"
    case .clientCredentials: "--client-credentials"
    }
  }
}
