import TokenKit

extension TokenCtl.Login {
  /// `error` with its way out as this very command line with another method, when the
  /// way just tried is one the type or its client does not support: the options the user
  /// gave (an issuer, a client id, scopes, a group) kept, so that the hint runs as shown
  /// (issue 25, first use, item 3: after `unauthorized_client` for the device grant, no
  /// word of `--browser` or `--paste`).
  ///
  /// Likewise an issuer given with `--issuer` that its server spells otherwise (a
  /// trailing slash): this command line with the server's spelling (item 4).
  func offeringOtherWays(_ error: TokenKitError) -> TokenKitError {
    switch error.remedy {
    case .signInAnotherWay(_, let device):
      let recovery =
        device
        ? "Run `\(commandLine(with: .device))`."
        : "Run `\(commandLine(with: .browser))`, or `\(commandLine(with: .paste))` over SSH."
      return error.with(recovery: recovery, remedy: nil)
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
    if noBrowser, method == .browser { words.append("--no-browser") }
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
