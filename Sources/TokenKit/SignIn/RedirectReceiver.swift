/// Waits for the authorization response (RFC 6749 §4.1.2) to come back from the browser:
/// a loopback listener (RFC 8252 §7.3) or the user pasting the redirected URL.
///
/// ## Implementation requirements
/// - Hand every candidate response to `judge` and act on its verdict: stop at the first
///   `.accept` or `.reject`; keep waiting after an `.ignore` (a forged or stale callback
///   must not end the sign-in, nor be able to complete it).
/// - Give up with ``TokenKitError` `.signInTimedOut`` after `timeout`.
/// - Never log or show the parameters: they hold the authorization code.
/// - A receiver that answers the browser may hold that answer until ``finish(_:)`` says how
///   the sign-in ended, so that the page names the account or the failure; it must answer
///   within a bound of its own even when `finish` never comes.
public protocol RedirectReceiver: Sendable {
  /// The `redirect_uri` of the authorization request (RFC 6749 §3.1.2).
  var redirectURI: String { get }

  /// Waits for the response `judge` accepts or rejects, and returns it.
  func receive(
    timeout: Duration, judge: @escaping @Sendable (AuthorizationCallback) -> CallbackVerdict
  ) async throws -> AuthorizationCallback

  /// Tells the receiver how the sign-in ended, once the code is exchanged and the account
  /// known (or the sign-in failed): for the page the browser is still waiting for. Called
  /// at most once, after `receive` returned; returns once the answer is sent.
  func finish(_ ending: SignInEnding)
}

extension RedirectReceiver {
  /// A receiver with nobody waiting for an answer (the user pasted the address) has
  /// nothing to say.
  public func finish(_ ending: SignInEnding) {}
}

/// How a sign-in ended, for the page a browser shows at its end: after the redirect, the
/// code is still to be exchanged and the account to be learned and stored, and any of that
/// can fail.
public enum SignInEnding: Sendable, Hashable {
  /// Signed in: `account` as the terminal names it (`ada at work`: name and type).
  case signedIn(account: String)
  /// Not signed in: the terminal's message, and its hint (a command to run) when it has one.
  case failed(message: String, hint: String?)
}

/// The query parameters of a redirect to the client (RFC 6749 §4.1.2): `code`, `state`,
/// `iss`, or `error` and `error_description`.
public struct AuthorizationCallback: Sendable, Hashable, CustomStringConvertible {
  public var parameters: [Parameter]

  public struct Parameter: Sendable, Hashable {
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) {
      self.name = name
      self.value = value
    }
  }

  public init(parameters: [Parameter]) { self.parameters = parameters }

  /// Parses a query string (`code=…&state=…`).
  public init(query: some StringProtocol) {
    parameters = FormEncoding.decode(query).map { Parameter($0.0, $0.1) }
  }

  /// The value of the first parameter named `name`.
  public subscript(name: String) -> String? { parameters.first { $0.name == name }?.value }

  /// How many times `name` occurs: RFC 6749 §3.1 says a parameter must not repeat.
  public func count(of name: String) -> Int { parameters.count { $0.name == name } }

  // The code is a secret: name the parameters, never their values.
  public var description: String {
    "AuthorizationCallback(\(parameters.map(\.name).joined(separator: ", ")))"
  }
}

/// What to do with a candidate authorization response.
public enum CallbackVerdict: Sendable, Hashable {
  /// The response to use: show the browser a success page and stop listening.
  case accept
  /// A genuine answer that ends the sign-in in failure (`error=access_denied`): show the
  /// browser `message` and stop listening.
  case reject(message: String)
  /// Not ours (wrong `state`, no `code`): answer 400 with `reason` and keep waiting.
  case ignore(reason: String)
}
