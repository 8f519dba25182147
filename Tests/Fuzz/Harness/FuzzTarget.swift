/// One fuzz target: a parser that reads what another party controls, with the checks the
/// product relies on.
///
/// `run(_:)` is the whole body of a libFuzzer target (`Tests/Fuzz`), and the seed replay
/// in `TokenKitTests` calls the same function, so a seed that `make test` accepts is one
/// the fuzzer starts from. A broken invariant traps, which libFuzzer reports as a crash.
///
/// `run` returns what the product made of the input, as a short label; each seed's file
/// name starts with the label it must get (`token-google.http`, `refused-cr.txt`), so the
/// seeds stay the realistic documents they are meant to be.
public enum FuzzTarget: String, CaseIterable, Sendable {
  /// git's credential helper protocol: `CredentialMessage`.
  case credential
  /// Server answers to the token, device authorization and discovery requests, with their
  /// status line and fields: `AuthorizationService` and the response types.
  case oauthResponse = "oauth-response"
  /// What comes back to the redirect URI: a pasted address or code, or the loopback
  /// listener's request head, judged by `AuthorizationRequest`.
  case redirect
  /// User-defined account types: `TOMLParser` and `DescriptorFile`.
  case descriptor
  /// ID tokens: `JSONWebToken`, `IDTokenClaims`, `JSONWebKeySet` and `IDTokenValidator`.
  case jose
  /// The agent's requests and answers: `AgentMessage`.
  case agent
  /// What the session bus sends the keyring's reads without GIO: `DBusMessage`.
  case dbus
  /// A keyring item's secret read as a stored token set, against JSONDecoder's reading:
  /// `TokenSet(storageJSON:item:)`.
  case storedTokens = "stored-tokens"

  /// Runs the target on one input; the label of what the product made of it.
  public func run(_ bytes: [UInt8]) -> String {
    switch self {
    case .credential: CredentialFuzzing.run(bytes)
    case .oauthResponse: OAuthResponseFuzzing.run(bytes)
    case .redirect: RedirectFuzzing.run(bytes)
    case .descriptor: DescriptorFuzzing.run(bytes)
    case .jose: JOSEFuzzing.run(bytes)
    case .agent: AgentMessageFuzzing.run(bytes)
    case .dbus: DBusMessageFuzzing.run(bytes)
    case .storedTokens: StoredTokensFuzzing.run(bytes)
    }
  }
}
