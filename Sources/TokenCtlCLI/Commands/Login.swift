import ArgumentParser
import NativeAppSupport
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension TokenCtl {
  /// `tokenctl login`: sign in to an account type and store the account.
  struct Login: AsyncParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "login",
      abstract: "Sign in to an account type and keep the account's tokens.",
      discussion: """
        With --browser (the default when a display is available) tokenctl opens the \
        sign-in page through $BROWSER, else xdg-open, prints the address too, and waits \
        for the browser to come back to a listener on 127.0.0.1 (RFC 8252). The request \
        uses PKCE, state and, for OpenID Connect, a nonce.

        The listener takes a port free at the time, which a provider that follows RFC 8252 \
        §7.3 accepts whatever it is: register http://127.0.0.1/ there. A provider that \
        matches the port exactly needs it fixed: register http://127.0.0.1:8400/, say, and \
        set redirect_port = 8400 in the type's table of config.toml (tokenctl-config(5)). A \
        provider that refuses the client id or the redirect shows its error page in the \
        browser and never comes back: tokenctl says so as it waits; stop it with Ctrl-C.

        With --paste, for SSH sessions or types whose redirect is out of band, tokenctl \
        prints the address and reads the address the browser ended on (or the code) from \
        the terminal.

        With --device (the default when none of DISPLAY, WAYLAND_DISPLAY and BROWSER is set \
        and the server offers it: its discovery document names a device_authorization_endpoint) \
        tokenctl shows a code to enter on another device (RFC 8628).

        With --client-credentials a confidential client signs in as itself (RFC 6749 §4.4).

        A type that discovers its endpoints from an issuer (oidc, and type files with \
        registration = true) needs no client id where the issuer lets clients register \
        themselves (RFC 7591): the first sign-in there registers tokenctl as a native public \
        client and keeps it in the keyring, and later sign-ins at that issuer reuse it. \
        `tokenctl unregister ISSUER` deletes it.

        Signing in again as the same user updates that account; it never adds a second one. \
        `tokenctl login ACCOUNT` (TYPE:NAME, or a NAME that is unique) signs that account in \
        again as it signed in before: at its issuer, with its client and scopes, naming the \
        user to the server; options given still apply.

        When the keyring refuses the tokens after the sign-in (it was locked again and cannot \
        ask, or its daemon went away), tokenctl revokes the grant the server just issued \
        (RFC 7009, where the type has a revocation endpoint) and says so; where it cannot, it \
        says the grant stays valid until it expires.
        """)

    @Argument(
      help: ArgumentHelp(
        "The account type (see `tokenctl types`), or an account to sign in to again.", valueName: "type-or-account"),
      completion: ShellCompletion.typesAndAccounts)
    var type: String

    @Option(help: ArgumentHelp("The client id to use instead of the type's.", valueName: "id"))
    var clientID: String?

    @Option(
      name: .customLong("scope"),
      help: ArgumentHelp("A scope to request instead of the type's defaults (repeatable).", valueName: "scope"))
    var scopes: [String] = []

    @Option(help: ArgumentHelp("The issuer, for types that discover their endpoints from one.", valueName: "url"))
    var issuer: String?

    @Option(
      help: ArgumentHelp(
        "The user to sign in as, told to the server so that it need not ask which (OpenID Connect login_hint).",
        valueName: "name"))
    var loginHint: String?

    @Flag(help: "How to sign in (default: the browser, or the device grant without a display).")
    var method: Method?

    @Flag(help: "Print the address but do not open a browser.")
    var noBrowser = false

    @Option(help: ArgumentHelp("Seconds to wait for the sign-in to finish.", valueName: "seconds"))
    var timeout: Int = Self.defaultTimeout

    /// Five minutes: time to find a password and answer a second factor.
    static let defaultTimeout = 300

    @OptionGroup var groupOption: GroupOption

    @Flag(help: "Print the account as JSON.")
    var json = false

    enum Method: String, EnumerableFlag {
      case browser, paste, device, clientCredentials
      static func help(for value: Method) -> ArgumentHelp? {
        switch value {
        case .browser: return "Sign in through the browser, redirected to a loopback listener."
        case .paste: return "Sign in through a browser anywhere, and paste where it ended."
        case .device: return "Sign in with a code entered on another device."
        case .clientCredentials: return "Sign in as the client itself (confidential clients)."
        }
      }
    }

    func validate() throws {
      guard timeout > 0 else { throw ValidationError("--timeout must be at least 1 second.") }
    }

    func run() async throws {
      do {
        try await run(in: try CommandSession.open(group: groupOption.group))
      } catch let error as TokenKitError {
        throw offeringOtherWays(error)
      }
    }

    /// Signs in within `session`: the running command's, or the git helper's that offers it.
    func run(in session: CommandSession) async throws {
      let context = session.context
      let store = session.store
      var manager = session.manager
      manager.sleep = context.sleep
      var options = SignInOptions(
        scopes: scopes.isEmpty ? nil : scopes, clientID: clientID, issuer: issuer, timeout: .seconds(timeout))
      options.loginHint = loginHint
      // `login ACCOUNT`: that account's type, and how it signed in.
      let again = try SignInAgain.account(named: type, registry: manager.registry, store: store).map(SignInAgain.init)
      let type = again?.account.type ?? type
      let descriptor = try manager.registry.descriptor(type)
      let registrar = session.registrar
      if let again {
        options = try again.options(completing: options, descriptor: descriptor) { userIssuer in
          try ClientRegistrar.issuer(registeringFor: descriptor, clientID: nil, userIssuer: userIssuer)
            .flatMap { try registrar.existing(at: $0) }?.clientID
        }
        options.signingInAgain = again.account
      }
      // The keyring first: a sign-in the keyring then refuses leaves the user with a grant
      // issued for nothing, after a trip through the browser.
      try store.checkWritable()
      // A type that registers its own client: the one registered at this issuer before,
      // whose loopback port a server that compares redirect URIs exactly insists on.
      let registrationIssuer = ClientRegistrar.issuer(
        registeringFor: descriptor, clientID: options.clientID, userIssuer: options.issuer)
      let registered = try registrationIssuer.flatMap { try registrar.existing(at: $0) }
      if let registered {
        options.clientID = registered.clientID
        options.clientSecret = registered.clientSecret
        options.clientRegisteredAt = registered.registeredAt
      }
      // A service account signs in again as the client it is.
      let chosen: Method
      if again?.account.isServiceAccount == true, method == nil {
        chosen = .clientCredentials
      } else {
        chosen = try await choose(
          type, descriptor, manager: manager, options: options, registering: registrationIssuer != nil,
          context: context)
      }
      let registeredNow = SendableFlag()
      let method = try signInMethod(
        chosen, type, descriptor, port: registered?.loopbackPort, registeredNow: registeredNow, context: context)
      if let registrationIssuer, registered == nil, chosen != .clientCredentials {
        let (registration, _) = try await registrar.client(
          at: registrationIssuer, for: descriptor, redirectURIs: [Self.redirectURI(of: method, descriptor)])
        options.clientID = registration.clientID
        options.clientSecret = registration.clientSecret
        options.clientRegisteredAt = registration.registeredAt
        _ = registeredNow.testAndSet()
        context.inform(
          "Registered tokenctl at \(registration.issuer) as client \(registration.clientID) "
            + "(`tokenctl unregister \(registration.issuer)` deletes it).")
      }
      if chosen == .browser { try await checkReachable(type, options: options, manager: manager, context: context) }
      let account: Account
      do {
        account = try await manager.signIn(type: type, options: options, method: method)
        // A repair that signed in another person has repaired nothing: the command fails, so
        // that a script does not go on as if the account worked.
        if let again, account.key != again.account.key {
          throw TokenKitError(
            .needsSignIn,
            "the server signed in \(account.qualifiedName), not \(again.account.qualifiedName), which still needs "
              + "its own sign-in: choose \(again.account.name) in the browser",
            remedy: .signInAgain(account: again.account.qualifiedName, group: again.account.group))
        }
      } catch {
        // The browser's page says what the terminal says.
        if let error = error as? TokenKitError {
          let failure = offeringOtherWays(error)
          method.finish(.failed(message: failure.message, hint: RemedyWording.recovery(for: failure)))
        } else {
          method.finish(.failed(message: "the sign-in stopped", hint: nil))
        }
        throw error
      }
      method.finish(.signedIn(account: "\(account.name) at \(account.type)"))
      if json {
        let listing = try store.list(AccountQuery(type: account.type, id: account.id)).first
        context.output.write(
          JSONOutput.render(
            AccountsDocument(accounts: listing.map { [AccountDocument($0, clock: context.clock)] } ?? [])))
      } else if !context.isQuiet {
        context.output.write(
          TerminalSafe.text("Signed in to \(account.type) as \(account.name) (group '\(account.group)').") + "\n")
      }
    }

    /// Whether a sign-in that names no method opens a browser here: a display, or a browser
    /// the user named (BROWSER, a text browser in an SSH session, say, or a script that
    /// hands the address on), as xdg-open would; else it signs in with a code where the
    /// type offers it.
    static func showsBrowser(environment: [String: String]) -> Bool {
      [environment["DISPLAY"], environment["WAYLAND_DISPLAY"], environment["BROWSER"]].contains { !($0 ?? "").isEmpty }
    }

    /// The method the user asked for, else the device grant when no display can show a
    /// browser and the type offers it, else the browser (or paste for out-of-band types).
    private func choose(
      _ type: String, _ descriptor: EndpointDescriptor, manager: AccountManager, options: SignInOptions,
      registering: Bool,
      context: CLIContext
    ) async throws -> Method {
      if let method { return method }
      if case .manualPaste = descriptor.redirect { return .paste }
      if Self.showsBrowser(environment: context.environment) { return .browser }
      var options = options
      // Only the endpoints are looked at here; a client yet to be registered has no id.
      if registering, options.clientID == nil { options.clientID = "(to be registered)" }
      let configuration = try await manager.configuration(type: type, options: options)
      if configuration.offersDeviceGrant { return .device }
      if configuration.endpoints.authorization == nil, configuration.client.secret != nil { return .clientCredentials }
      return .paste
    }

    /// The redirect URI a registration names for `method`: the listener's own, or the
    /// type's loopback address without a port (RFC 8252 §7.3) for the other methods.
    private static func redirectURI(of method: SignInMethod, _ descriptor: EndpointDescriptor) -> String {
      if case .browser(let receiver, _, _) = method { return receiver.redirectURI }
      switch descriptor.redirect {
      case .manualPaste(let uri): return uri
      case .loopback(let host, let port, let path): return "http://\(host)\(port.map { ":\($0)" } ?? "")\(path)"
      }
    }

    /// What to do when the browser shows the provider's error page rather than its sign-in,
    /// said once as the wait begins: the provider then never sends the browser back, and
    /// tokenctl would wait out its whole timeout without a word. The two usual causes are a
    /// client id the provider does not know and a redirect address it does not accept (a
    /// provider that compares the port too, against RFC 8252 §7.3).
    static func refusedSignInAdvice(redirectURI: String, type: String, paste: String, device: String) -> String {
      "If the browser shows an error page instead, the provider refused the client id or the redirect address "
        + "\(redirectURI): stop with Ctrl-C, check the client id, or try `\(paste)` or `\(device)`. A provider "
        + "that accepts only the exact port registered needs that port as redirect_port in the [types.\(type)] "
        + "table of config.toml (see tokenctl-providers(7)).\n"
    }

    /// Said as the wait begins when tokenctl registered its client moments ago: a provider
    /// that runs several workers may know the client in one of them only until the others
    /// reload their configuration (LemonLDAP::NG's each do every ten minutes by default),
    /// and its portal then shows an error page for a client it says does not exist. Nothing
    /// comes back to tokenctl to retry; the person can, later, with the same client.
    static func freshRegistrationAdvice(signIn: String) -> String {
      "tokenctl registered its client seconds ago: if the error page says the client is unknown, the provider "
        + "has not spread the registration to all its workers yet. Sign in again in a few minutes with "
        + "`\(signIn)`: the registration is kept.\n"
    }

    /// `registeredPort`: the port a registered client's redirect URI names, used when the
    /// type fixes none; when it is taken, any port, which servers that follow RFC 8252
    /// §7.3 accept.
    private func signInMethod(
      _ method: Method, _ type: String, _ descriptor: EndpointDescriptor, port registeredPort: UInt16? = nil,
      registeredNow: SendableFlag = SendableFlag(), context: CLIContext
    ) throws
      -> SignInMethod
    {
      let output = context.output
      switch method {
      case .browser:
        guard case .loopback(let host, let port, let path) = descriptor.redirect else {
          throw ValidationError("Account type '\(type)' has an out-of-band redirect: use --paste.")
        }
        let debugging = context.isDebugging
        let log: @Sendable (String) -> Void = { line in if debugging { output.writeError("tokenctl: debug: \(line)\n") }
        }
        let listen = { (port: UInt16?) in
          try LoopbackRedirectListener(
            host: host, port: port, path: path, successPage: SignInPages.stillFinishing,
            failurePage: SignInPages.failure, endingPage: SignInPages.ending, log: log)
        }
        let listener: LoopbackRedirectListener
        if port == nil, let registeredPort {
          do {
            listener = try listen(registeredPort)
          } catch {
            context.warnings.add(
              "port \(registeredPort), which tokenctl's client was registered with, is taken; a server that "
                + "compares redirect URIs port included will refuse the sign-in")
            listener = try listen(nil)
          }
        } else {
          listener = try listen(port)
        }
        let environment = context.environment
        let open = context.openBrowser
        let noBrowser = self.noBrowser
        let timeout = self.timeout
        let refusal = Self.refusedSignInAdvice(
          redirectURI: listener.redirectURI, type: type, paste: commandLine(with: .paste),
          device: commandLine(with: .device))
        let fresh = Self.freshRegistrationAdvice(signIn: commandLine(with: .browser))
        return .browser(receiver: listener) { url in
          output.writeError("Open this address to sign in:\n\n  \(url.absoluteString)\n\n")
          if !noBrowser {
            if let used = open(url.absoluteString, environment) {
              output.writeError(TerminalSafe.text("Opened your browser with \(used).") + " ")
            } else {
              // Nothing will come to the listener unless the user opens the address: say so
              // before the wait, with the two sign-ins that need no browser here.
              output.writeError(
                "No browser started: BROWSER and xdg-open each failed or are missing. Open the address above in "
                  + "a browser yourself, or stop with Ctrl-C and sign in without one: "
                  + TerminalSafe.text("tokenctl login \(type) --paste") + " (a browser on any machine) or "
                  + TerminalSafe.text("tokenctl login \(type) --device") + " (where the server offers it). ")
            }
          }
          output.writeError(
            "Waiting up to \(DurationText.format(seconds: timeout)) for the browser to come back to "
              + "\(listener.redirectURI) once you have signed in.\n" + refusal
              + (registeredNow.isSet ? fresh : ""))
        }
      case .paste:
        let redirectURI: String
        switch descriptor.redirect {
        case .manualPaste(let uri): redirectURI = uri
        case .loopback(let host, let port, let path):
          redirectURI = "http://\(host)\(port.map { ":\($0)" } ?? "")\(path)"
        }
        let receiver = ManualPasteReceiver(redirectURI: redirectURI, readLine: context.readLine) {
          output.writeError($0)
        }
        return .browser(receiver: receiver, bareCodeAllowed: true) { url in
          output.writeError(
            "Open this address in a browser on any machine and sign in:\n\n  \(url.absoluteString)\n\n"
              + "The browser then shows an error page or a code: that is expected.\n")
        }
      case .device:
        // The progress line is rewritten in place on a terminal only: the messages' own,
        // not the results' (`tokenctl login 2>log` on a terminal writes no control codes).
        let terminal = output.errorIsTerminal
        let shown = SendableFlag()
        return .device(
          present: { authorization, secondsLeft in
            if !shown.testAndSet() {
              // The server's words are escaped one by one, line breaks included, so that
              // none of them can start a line that looks like ours.
              let safe = { (text: String) in ServerText.escaped(text) }
              var text =
                "To sign in, open \(safe(authorization.verificationURI))\nand enter the code \(safe(authorization.userCode))"
                + " (it expires in \(DurationText.format(seconds: secondsLeft))).\n"
              // RFC 8628 has no `message`; servers that add one (the code and address in
              // a sentence) would say it all twice. Kept only when it says something else.
              if let message = authorization.message, !message.contains(authorization.userCode) {
                text += safe(message) + "\n"
              }
              if let complete = authorization.verificationURIComplete { text += "(or open \(safe(complete)))\n" }
              output.writeError(text)
            }
            let left = "Waiting for approval: the code expires in \(DurationText.format(seconds: secondsLeft)). "
            output.writeError(terminal ? "\r\u{1B}[K" + left : "")
          }, sleep: context.sleep)
      case .clientCredentials:
        return .clientCredentials
      }
    }
  }
}
