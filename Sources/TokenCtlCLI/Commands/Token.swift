import AgentFrontEnd
import AgentProtocol
import ArgumentParser
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension TokenCtl {
  /// `tokenctl token`: print an account's access token for a script or a tool.
  struct Token: AsyncParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "token",
      abstract: "Print an account's access token, refreshing it first if needed.",
      discussion: """
        Prints the access token alone on standard output, for use as \
        `curl -H "Authorization: Bearer $(tokenctl token graph:ada@contoso.com)" URL`. \
        A token that expires within the margin is refreshed first; when many processes \
        ask at once, one refreshes and the others use its result. The margin is \
        --min-valid seconds, or by default one minute (a tenth of the lifetime for tokens \
        issued for less than ten minutes).

        --scope asks for a token for exactly those scopes instead, with the account's \
        refresh token (RFC 6749 section 6; a service account asks with its client's \
        credentials): a token for another API, or a narrower one, from the same sign-in, \
        such as Outlook's IMAP from a Microsoft sign-in. It is kept beside the account, \
        per set of scopes, and refreshed the same way; the account's own token is left as \
        it is. A scope the server refuses (invalid_scope) gives exit status 17.

        --json prints the token with when it expires and the scopes it carries, as a \
        document with a format version. The scopes are those the token itself names (a \
        JWT's scope or scp claim), else those the server's answer named. For a token asked \
        for with --scope whose server named none, they are the ones asked for, and \
        scopes_confirmed is false: RFC 6749 section 5.1 lets a client assume it got what it \
        asked for, but some servers say nothing and issue the sign-in's scopes instead. \
        The plain form says so on standard error.
        """)

    @Argument(
      help: ArgumentHelp(
        "The account: TYPE:NAME, a NAME that is unique, or a URL (the account its host's helper answers with).",
        valueName: "account"),
      completion: ShellCompletion.accounts)
    var account: String

    @Option(
      help: ArgumentHelp("Seconds the token must stay valid for (default: adapts to the token).", valueName: "seconds"))
    var minValid: Int?

    @OptionGroup var scopeOption: ScopeOption

    @OptionGroup var groupOption: GroupOption

    @Flag(help: "Print the token, its expiry and its scopes as JSON.")
    var json = false

    func validate() throws {
      if let minValid, minValid < 0 { throw ValidationError("--min-valid must be 0 or more seconds.") }
    }

    func run() async throws {
      try await Self.printToken(
        account: account, minValid: minValid, scopes: scopeOption.scopes, group: groupOption.group, json: json)
    }

    /// The command's work, on its parsed values. `TokenCtl.main` calls it directly, without
    /// parsing, for the plain `token ACCOUNT` (see ``TokenCtl/Shortcut``).
    static func printToken(
      account: String, minValid: Int?, scopes: ScopeSet? = nil, group: String?, json: Bool = false
    ) async throws {
      var session = try CommandSession.open(group: group, configured: false)
      var account = account
      if ClientCommand.namesURL(account) {
        // A URL: the account the helpers would answer it with, by the same rule.
        session = try session.configured()
        account = try Credential.account(forURL: account, session: session)
      }
      let context = session.context
      let store = session.store
      switch context.agent?.token(account: account, minValid: minValid, scopes: scopes, group: store.group) {
      case .answered(let answer, _, let warnings):
        let token = answer["access-token"] ?? ""
        let carried = answer["token-scopes"].map {
          // An agent that does not say whether they were confirmed reported them as before.
          CarriedScopes(
            scopes: $0.split(separator: " ").map(String.init), confirmed: answer["token-scopes-confirmed"] != "0")
        }
        context.output.write(
          json
            ? JSONOutput.render(
              TokenDocument(
                access_token: token,
                expires_at: answer["expires"].flatMap(Double.init).map {
                  JSONOutput.timestamp(Date(timeIntervalSince1970: $0))
                },
                scopes: carried?.scopes, scopes_confirmed: carried?.confirmed))
            : token + "\n")
        for warning in warnings { context.warnings.add(warning) }
        if let carried { warnOfUnconfirmedScopes(carried, json: json, context) }
        return
      case .failed(let error, _): throw error
      case nil: break
      }
      let reference = AccountReference(parsing: account, knownTypes: Set(context.registry.ids))
      let stored = try reference.load(from: store)
      if let scopes {
        let manager = try session.configured().manager
        let tokens = try await manager.freshTokens(
          for: stored, scopes: scopes, minimumValidity: minValid.map(Double.init))
        warnOfUnmeetableMargin(minValid, tokens, stored.account, context)
        let carried =
          scopes.isOwn(of: stored.account)
          ? CarriedScopes(ownToken: tokens, granted: stored.account.scopes)
          : CarriedScopes(tokens, asked: scopes.scopes)
        context.output.write(Self.text(tokens, carrying: carried, json: json))
        warnOfUnconfirmedScopes(carried, json: json, context)
        return
      }
      // The fast path: a valid token needs no configuration or network, and of the lock
      // only a look at whether a refresh holds it (then the token may be about to die).
      let margin = minValid.map(Double.init) ?? stored.tokens.defaultRefreshMargin
      if let tokens = try stored.servableTokens(
        forAtLeast: margin, clock: context.clock, locks: context.accountLocks,
        registry: { try session.configured().registry })
      {
        context.output.write(
          Self.text(tokens, carrying: CarriedScopes(ownToken: tokens, granted: stored.account.scopes), json: json))
        return
      }
      let manager = try session.configured().manager
      let tokens = try await manager.freshTokens(for: stored, minimumValidity: minValid.map(Double.init))
      warnOfUnmeetableMargin(minValid, tokens, stored.account, context)
      context.output.write(
        Self.text(tokens, carrying: CarriedScopes(ownToken: tokens, granted: stored.account.scopes), json: json))
    }

    /// Says, for the plain form, that the server did not confirm the scopes a token for
    /// other scopes was asked for (``CarriedScopes``); `--json` says it in
    /// `scopes_confirmed`.
    private static func warnOfUnconfirmedScopes(_ carried: CarriedScopes, json: Bool, _ context: CLIContext) {
      guard !carried.confirmed, !json else { return }
      context.warnings.add(
        "the server did not confirm that this token carries \(carried.scopes.joined(separator: " ")): its answer "
          + "named no scope, and the token is not a JWT that names them, so it may carry other scopes, such as "
          + "those of the sign-in")
    }

    /// Says once when `--min-valid` asks for more than the server's tokens live
    /// (``UnmeetableMargin``), which the refresh just handed out all the same.
    private static func warnOfUnmeetableMargin(
      _ minValid: Int?, _ tokens: TokenSet, _ account: Account, _ context: CLIContext
    ) {
      guard let minValid,
        let shortfall = UnmeetableMargin(asked: Double(minValid), handedOut: tokens, now: context.clock.now)
      else { return }
      context.warnings.add(shortfall.warning(for: account))
    }

    /// The token alone on a line, or with its expiry and scopes as JSON. The scopes are
    /// worked out for JSON alone: reading them may decode the token, which the plain
    /// form, the hot path, has no use for.
    private static func text(
      _ tokens: TokenSet, carrying scopes: @autoclosure () -> CarriedScopes, json: Bool
    )
      -> String
    {
      guard json else { return tokens.accessToken + "\n" }
      let carried = scopes()
      return JSONOutput.render(
        TokenDocument(
          access_token: tokens.accessToken, expires_at: tokens.expiresAt.map(JSONOutput.timestamp),
          scopes: carried.scopes, scopes_confirmed: carried.confirmed))
    }
  }

  /// `token --json`: the token, when it expires (RFC 3339, null when the server did not
  /// say), the scopes it carries, and whether the token or the server said so
  /// (``CarriedScopes``).
  struct TokenDocument: Encodable {
    let format = JSONOutput.formatVersion
    var access_token: String
    var expires_at: String?
    var scopes: [String]?
    var scopes_confirmed: Bool?

    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(format, forKey: .format)
      try container.encode(access_token, forKey: .access_token)
      // null rather than absent: a script reads `.expires_at` either way.
      try container.encode(expires_at, forKey: .expires_at)
      try container.encodeIfPresent(scopes, forKey: .scopes)
      try container.encodeIfPresent(scopes_confirmed, forKey: .scopes_confirmed)
    }

    enum CodingKeys: String, CodingKey { case format, access_token, expires_at, scopes, scopes_confirmed }
  }
}
