/// What a provider's answers to requests that sign no one in show about the client's
/// registration with it: its tenant, its redirect, the flows it allows. A provider states
/// such a setting only in the error that ends a sign-in, after the person has typed their
/// password; asked beforehand, a mistake is found while nothing depends on it. An account
/// type's plugin makes these (``AccountTypeBehavior/registrationFindings(_:transport:)``);
/// a front end shows them.
public struct RegistrationFinding: Sendable, Hashable {
  public enum Verdict: Sendable, Hashable {
    /// The provider's answer shows the setting as a sign-in needs it.
    case holds
    /// The provider's answer shows a setting that makes sign-in fail.
    case fails
    /// No answer short of a sign-in tells: ``advice`` says where to look instead.
    case unknown
  }

  /// Which sign-ins the setting stands in the way of.
  public enum Need: Sendable, Hashable {
    case everySignIn
    /// A sign-in in a browser that comes back to a redirect URI (RFC 6749 §4.1).
    case browserSignIn
    /// A sign-in with a code entered on another device (RFC 8628).
    case deviceSignIn
  }

  /// Short and stable, for scripts: `redirect`, `public-client-flows`.
  public var aspect: String
  /// What was looked at, for people: "Redirect http://localhost/".
  public var subject: String
  public var verdict: Verdict
  public var neededBy: Need
  /// What the answer showed, or why no answer can show it.
  public var detail: String
  /// What to change, or where to look, in the provider's own words (its portal's pages
  /// and settings), naming no front end's commands; nil when the setting holds.
  public var advice: String?

  public init(
    aspect: String, subject: String, verdict: Verdict, neededBy: Need, detail: String, advice: String? = nil
  ) {
    self.aspect = aspect
    self.subject = subject
    self.verdict = verdict
    self.neededBy = neededBy
    self.detail = detail
    self.advice = advice
  }
}
