/// When a sign-in asks for consent so that `offline_access` is honoured.
///
/// OpenID Connect Core §11: when `offline_access` is requested, "a prompt parameter value
/// of consent MUST be used" unless other conditions permit offline access; a server
/// that enforces it (the oidc plugin's type says so) silently drops `offline_access` from a request
/// without `prompt=consent` and issues no refresh token. It grants offline access per
/// request, not per client: a new sign-in may be another user at the issuer, so only the
/// account signed in again that still holds a refresh token the server has not refused
/// goes without.
public enum OfflineAccessConsent {
  /// The parameters to add to an authorization request for `scopes`:
  /// - `prompt=consent` when `offline_access` is asked for and the account has no
  ///   refresh token yet (its grant would be lost without it);
  /// - nothing when the account already has one: the consent screen every time would
  ///   only annoy;
  /// - nothing when `configured` (the type's or the user's authorization parameters)
  ///   already says `prompt`: what the user set wins.
  public static func parameters(
    scopes: [String], accountHasRefreshToken: Bool, configured: [String: String]
  ) -> [String: String] {
    guard scopes.contains("offline_access"), !accountHasRefreshToken, configured["prompt"] == nil else { return [:] }
    return ["prompt": "consent"]
  }
}
