#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Validates an ID token from a token response, as OpenID Connect Core §3.1.3.7 lays out.
///
/// The checks, in order, each failing with a `TokenKitError.Code.invalidIDToken` that says
/// which one failed (never quoting the token or the nonce):
/// 1. the token parses as a signed JWT (`JSONWebToken`) with the claims of §2;
/// 2. `iss` equals `issuer` exactly (step 2);
/// 3. `aud` contains `clientID` (step 3); with several audiences `azp` is present, and
///    whenever present `azp` is `clientID` (steps 4 and 5);
/// 4. the signature is valid under `keys` (steps 6–8), unless `keys` is `nil`;
/// 5. `exp` is not past, `iat` and `nbf` are not in the future, give or take `clockSkew`
///    (steps 9 and 10);
/// 6. `nonce` equals the one the sign-in sent, if it sent one (step 11).
public struct IDTokenValidator: Sendable {
  /// The default tolerance for clock differences: five minutes.
  ///
  /// A laptop's clock can be a few minutes off, more so just after a resume from suspend,
  /// and an issuer's clock can be too; a token issued "in the future" by seconds is the
  /// usual symptom. Five minutes is the customary allowance (RFC 7519 §4.1.4 suggests "a
  /// few minutes"): small next to the hour an ID token typically lives, so it extends a
  /// replay window only a little.
  public static let defaultClockSkew: Duration = .seconds(300)

  /// The issuer identifier (Discovery §3 `issuer`), compared with `iss` exactly: no case
  /// folding, no trailing-slash forgiveness.
  public var issuer: String
  /// The `client_id` the token must be for.
  public var clientID: String
  /// The issuer's keys (from `jwks_uri`), or `nil` if the issuer publishes none. Without
  /// keys the signature is not checked, which §3.1.3.7 step 6 allows for a token received
  /// directly from the token endpoint over TLS; the claims then say `signatureVerified`
  /// is false.
  public var keys: JSONWebKeySet?
  /// How far the issuer's clock and ours may disagree.
  public var clockSkew: Duration

  public init(issuer: String, clientID: String, keys: JSONWebKeySet?, clockSkew: Duration = Self.defaultClockSkew) {
    self.issuer = issuer
    self.clientID = clientID
    self.keys = keys
    self.clockSkew = clockSkew
  }

  /// Validates the ID token of a sign-in's token response.
  ///
  /// - Parameters:
  ///   - idToken: The `id_token` of the token response (§3.1.3.3).
  ///   - nonce: The `nonce` the authorization request sent (§3.1.2.1), or `nil` if it sent
  ///     none; then a `nonce` in the token is not checked.
  ///   - clock: What time it is.
  public func validate(_ idToken: some StringProtocol, nonce: String?, clock: some WallClock) throws -> IDTokenClaims {
    let claims = try check(idToken, clock: clock)
    if let nonce {
      guard let received = claims.nonce else {
        throw failure("The ID token carries no nonce, but this sign-in sent one.")
      }
      guard received == nonce else {
        throw failure(
          "The ID token's nonce does not match the one this sign-in sent.",
          recovery: "Sign in again, one sign-in at a time: the response may belong to another sign-in, or be replayed.")
      }
    }
    return claims
  }

  /// Validates an ID token that came with a refresh (OpenID Connect Core §12.2).
  ///
  /// The same checks as `validate`, except the nonce, which a refreshed token need not
  /// carry; and `iss`, `sub`, `aud` and `azp` must be those of the ID token of the original
  /// sign-in, `previous`, which `IDTokenClaims(unverified:)` can read back from storage,
  /// and `iat` must not be earlier than `previous`'s.
  public func validateRefreshed(
    _ idToken: some StringProtocol, previous: IDTokenClaims, clock: some WallClock
  ) throws -> IDTokenClaims {
    let claims = try check(idToken, clock: clock)
    let recovery = "Sign in again to this account."
    guard claims.issuer == previous.issuer else {
      throw failure(
        "The refreshed ID token was issued by \(ServerText.escaped(claims.issuer)), not by \(ServerText.escaped(previous.issuer)), which issued the first one.",
        recovery: recovery)
    }
    guard claims.subject == previous.subject else {
      throw failure("The refreshed ID token is for a different user (sub) than the first one.", recovery: recovery)
    }
    guard Set(claims.audience) == Set(previous.audience) else {
      throw failure(
        "The refreshed ID token is for the audience \(Self.list(claims.audience)), not \(Self.list(previous.audience)) "
          + "like the first one.",
        recovery: recovery)
    }
    guard claims.authorizedParty == previous.authorizedParty else {
      throw failure(
        "The refreshed ID token names a different authorized party (azp) than the first one.", recovery: recovery)
    }
    // §12.2: iat is the time the new token was issued, so never before the first one's.
    guard claims.issuedAt >= previous.issuedAt else {
      throw failure(
        "The refreshed ID token claims to be issued at \(Self.text(claims.issuedAt)), before the first one "
          + "(\(Self.text(previous.issuedAt))).",
        recovery: recovery)
    }
    return claims
  }

  /// Every check but the nonce and §12.2's comparison.
  private func check(_ idToken: some StringProtocol, clock: some WallClock) throws -> IDTokenClaims {
    let token = try JSONWebToken(compact: idToken)
    // RFC 8725 §3.11: an access token in JWT form (RFC 9068 §2.1) is not an ID token, even
    // if its claims happen to fit.
    if let type = token.header.type?.lowercased(), type == "at+jwt" || type == "application/at+jwt" {
      throw failure("The token is an access token (typ \(ServerText.escaped(type))), not an ID token.")
    }
    var claims = try IDTokenClaims(token: token, signatureVerified: false)

    guard claims.issuer == issuer else {
      throw failure(
        "The ID token was issued by \(ServerText.escaped(claims.issuer)), not by the expected issuer \(issuer).")
    }
    guard claims.audience.contains(clientID) else {
      throw failure("The ID token is for \(Self.list(claims.audience)), not for this client id \(clientID).")
    }
    if claims.audience.count > 1 && claims.authorizedParty == nil {
      throw failure(
        "The ID token has several audiences but no authorized party (azp) saying which client it was issued to.")
    }
    if let party = claims.authorizedParty, party != clientID {
      throw failure(
        "The ID token was issued to the client \(ServerText.escaped(party)) (azp), not to this client id \(clientID).")
    }

    if let keys {
      try keys.verify(token)
      claims.signatureVerified = true
    }

    let now = clock.now
    let skew = TimeInterval(clockSkew.components.seconds) + TimeInterval(clockSkew.components.attoseconds) / 1e18
    let clockRecovery = "Check that this computer's clock is right (timedatectl), then sign in again."
    guard claims.expiresAt > now.addingTimeInterval(-skew) else {
      throw failure(
        "The ID token expired at \(Self.text(claims.expiresAt)); this computer's time, \(Self.text(now)), is past "
          + "it by more than the \(DurationText.format(clockSkew)) allowed for clock differences.",
        recovery: clockRecovery)
    }
    guard claims.issuedAt <= now.addingTimeInterval(skew) else {
      throw failure(
        "The ID token was issued at \(Self.text(claims.issuedAt)), ahead of this computer's time, "
          + "\(Self.text(now)), by more than the \(DurationText.format(clockSkew)) allowed for clock differences.",
        recovery: clockRecovery)
    }
    if let notBefore = claims.notBefore, notBefore > now.addingTimeInterval(skew) {
      throw failure(
        "The ID token is not valid before \(Self.text(notBefore)), ahead of this computer's time, "
          + "\(Self.text(now)), by more than the \(DurationText.format(clockSkew)) allowed for clock differences.",
        recovery: clockRecovery)
    }
    return claims
  }

  private func failure(
    _ message: String, recovery: String = JSONWebKeySet.misconfigured
  ) -> TokenKitError {
    TokenKitError(.invalidIDToken, message, recovery: recovery)
  }

  private static func list(_ audience: [String]) -> String {
    let escaped = audience.map { ServerText.escaped($0) }
    return escaped.count == 1 ? escaped[0] : "[\(escaped.joined(separator: ", "))]"
  }

  private static func text(_ date: Date) -> String { date.formatted(.iso8601) }
}
