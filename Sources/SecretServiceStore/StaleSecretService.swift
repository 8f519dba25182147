import TokenKit

/// A call failed because the Secret Service libsecret remembers has left the bus
/// (`SecretServiceError.serviceWentAway`), or refuses the session libsecret keeps with it
/// (``SessionRefusal``). The store forgets that service, and its session with it, and tries
/// the operation once more; `error` is what the user sees when the second try fails too.
struct StaleSecretService: Error {
  let error: TokenKitError
}
