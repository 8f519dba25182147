/// Where the clients registered for tokenctl are kept: one per issuer, shared by every
/// group (a client is the program's, not an account's).
///
/// ## Implementation requirements
/// - `save` inserts, or replaces the registration of the same issuer.
/// - A store that cannot tell "absent" from "unreadable" (a locked keyring) must throw
///   rather than report the registration missing: a sign-in would register another client.
public protocol ClientRegistrationStore: Sendable {
  /// The client registered at `issuer`, or nil.
  func load(issuer: String) throws -> ClientRegistration?
  /// Keeps `registration`, replacing any other of its issuer.
  func save(_ registration: ClientRegistration) throws
  /// Forgets the registration at `issuer`; returns whether there was one.
  @discardableResult
  func remove(issuer: String) throws -> Bool
}
