import TokenKit

extension UnmeetableMargin {
  /// The warning `tokenctl token --min-valid` prints once when the margin cannot be met, in
  /// the same words whether the command or the agent handed out the token: the agent sends
  /// it as a `warning` of its answer. It names no token.
  public func warning(for account: Account) -> String {
    "\(account.qualifiedName)'s tokens live \(lifetime) s at the server; --min-valid \(asked) cannot be met, "
      + "so every call refreshes. Use --min-valid \(largestUseful) or less."
  }
}
