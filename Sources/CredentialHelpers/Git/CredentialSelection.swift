/// What the choosing policy decided for a request.
public enum CredentialSelection: Sendable, Hashable {
  /// The one account to answer with.
  case account(CredentialChoice)
  /// No type of ours serves the host, or not over this protocol: git asks its next helper,
  /// and nothing is said, as for any host that is not ours.
  case notOurs
  /// Types of ours serve the host, but no single account may answer.
  case declined(CredentialDecline)
}
