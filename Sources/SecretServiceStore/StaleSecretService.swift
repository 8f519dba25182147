import TokenKit

/// A call failed because the Secret Service libsecret remembers has left the bus
/// (`SecretServiceError.serviceWentAway`). The store forgets that service and tries the
/// operation once more; `error` is what the user sees when the second try fails too.
struct StaleSecretService: Error {
  let error: TokenKitError
}
