/// What the user decided about an application asking for an account's tokens.
public enum ConsentDecision: Sendable, Equatable {
  /// A grant covers the account.
  case allowed
  /// The user denied the application, in this group or in every group: refuse without asking.
  case denied
  /// Nothing covers the account: refuse, and the front end may ask the user.
  case undecided
}
