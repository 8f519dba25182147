/// The answers by which a Secret Service provider refuses the session libsecret moves
/// secrets in, each with its cause: the one list of them, read by `GLibBridge.call` for
/// every call.
///
/// libsecret keeps one session per `SecretService`, and one `SecretService` per process,
/// so a session refused once is refused to every later write (and to the reads made in
/// libsecret's session) until the process ends. The remedy is the same for each: forget
/// libsecret's service (`secret_service_disconnect`), and its session with it, and do the
/// operation once more in a new session, with a new key exchange.
///
/// | Name                             | Message begins                      | Who, and when                              |
/// |----------------------------------|-------------------------------------|--------------------------------------------|
/// | `Secret.Error.NoSession`         | (any)                               | the spec's: a session closed, or forgotten |
/// | `Secret.Error.NoSession`         | `The session does not exist`, …     | gnome-keyring, the name stripped           |
/// | `Secret.Error.NoSession`         | `Error return with empty body`      | KeePassXC, the name stripped               |
/// | `DBus.Error.UnknownObject`       | `Can't find session `               | kwalletd5: `SetSecret`, `GetSecret(s)`     |
/// | `QtDBus.Error.InvalidObjectPath` | `Can't find session `               | kwalletd5: `CreateItem`                    |
/// | `DBus.Error.InvalidArgs`         | `Client public key size is invalid` | kwalletd5: `OpenSession`                   |
///
/// The quirks behind it: ``SecretServiceQuirk/refusesSomeSessions`` and
/// ``SecretServiceQuirk/forgetsSessionsOnRestart``.
///
/// kwalletd5 says "Can't find session" of a session it has too: of one its bus name's
/// owner did not open, and of a secret that does not decrypt under the session's key. The
/// latter happens to 1 session in 256 of libsecret's: kwalletd derives its AES key from
/// the Diffie-Hellman shared secret without its leading zero bytes (OpenSSL's
/// `DH_compute_key`, through QCA), libsecret from all 128 bytes, so when the secret's first
/// byte is zero the two keys differ. The same key size rule, applied to libsecret's public
/// key, makes kwalletd refuse `OpenSession` for 1 session in 256: libsecret sends its key
/// without leading zero bytes, and kwalletd wants 128.
enum SessionRefusal {
  /// An answer of a provider's: the D-Bus error name, and how its message begins (nil:
  /// any message).
  struct Answer: Sendable {
    let name: String
    let messagePrefix: String?
  }

  static let answers: [Answer] = [
    // The spec's name for a session the provider does not know: closed, or opened before
    // the provider restarted.
    Answer(name: "org.freedesktop.Secret.Error.NoSession", messagePrefix: nil),
    // gnome-keyring's words for it, for when libsecret has stripped the name: no GError is
    // registered for it.
    Answer(name: "org.freedesktop.Secret.Error.NoSession", messagePrefix: "The session does not exist"),
    Answer(
      name: "org.freedesktop.Secret.Error.NoSession", messagePrefix: "The session wrapping the secret does not exist"),
    // KeePassXC's: the name with no message, which GDBus words so. Without the name (which
    // libsecret strips), any error without a message is tried once more: a try too many
    // where it meant something else, never a write lost.
    Answer(name: "org.freedesktop.Secret.Error.NoSession", messagePrefix: "Error return with empty body"),
    // kwalletd5's SetSecret and GetSecret(s): the session is gone, or the secret does not
    // decrypt under its key (see above).
    Answer(name: "org.freedesktop.DBus.Error.UnknownObject", messagePrefix: "Can't find session "),
    // kwalletd5's CreateItem, for the same causes.
    Answer(name: "org.qtproject.QtDBus.Error.InvalidObjectPath", messagePrefix: "Can't find session "),
    // kwalletd5's OpenSession, for a public key of fewer than 128 bytes (see above).
    Answer(name: "org.freedesktop.DBus.Error.InvalidArgs", messagePrefix: "Client public key size is invalid"),
  ]

  /// Whether the error named `remoteName` (nil: libsecret stripped the name, as it does
  /// for the names no GError is registered for) with `message` is one of `answers`. A name
  /// alone matches only the answers that take any message; without a name, the message
  /// must begin as an answer's does.
  static func refuses(remoteName: String?, message: String) -> Bool {
    answers.contains { answer in
      guard remoteName == nil || remoteName == answer.name else { return false }
      guard let prefix = answer.messagePrefix else { return remoteName != nil }
      return message.hasPrefix(prefix)
    }
  }
}
