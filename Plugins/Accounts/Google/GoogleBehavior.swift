import TokenKit

/// Google sends a refresh token only when asked for offline access, and only on the
/// consent screen, which it skips for a client the user has approved before.
public struct GoogleBehavior: AccountTypeBehavior {
  public init() {}

  /// `access_type=offline` always; `prompt=consent` when no Google account here has a
  /// refresh token, since a user who approved tokenctl before (and then removed it here)
  /// would otherwise get none. With one, the consent screen is skipped: asking every
  /// time would only annoy, and Google limits how many refresh tokens a client may hold
  /// per user, the oldest ceasing to work.
  public func authorizationParameters(hasRefreshableAccount: Bool) -> [String: String] {
    hasRefreshableAccount ? ["access_type": "offline"] : ["access_type": "offline", "prompt": "consent"]
  }
}
