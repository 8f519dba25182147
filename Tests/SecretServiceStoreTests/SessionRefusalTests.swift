import Testing

@testable import SecretServiceStore

/// Which answers of a provider mean that the session libsecret keeps is refused, with the
/// name GDBus read and without it (libsecret strips the names no GError is registered for).
@Suite struct SessionRefusalTests {
  /// A D-Bus error name (nil: stripped), its message, and whether it is a refusal.
  static let answers: [(String?, String, Bool)] = [
    ("org.freedesktop.Secret.Error.NoSession", "anything", true),
    (nil, "The session does not exist", true),
    (nil, "The session wrapping the secret does not exist", true),
    (nil, "Error return with empty body", true),
    ("org.freedesktop.DBus.Error.UnknownObject", "Can't find session /org/freedesktop/secrets/session/1", true),
    (nil, "Can't find session /org/freedesktop/secrets/session/7", true),
    ("org.qtproject.QtDBus.Error.InvalidObjectPath", "Can't find session /org/freedesktop/secrets/session/2", true),
    ("org.freedesktop.DBus.Error.InvalidArgs", "Client public key size is invalid", true),
    // The same names for other things: an item gone, an argument wrong.
    ("org.freedesktop.DBus.Error.UnknownObject", "No such object path '/org/freedesktop/secrets/collection/x'", false),
    ("org.freedesktop.DBus.Error.InvalidArgs", "Item label is missing (org.freedesktop.Secret.Item.Label)", false),
    // Another name with a refusal's words is someone else's error.
    ("org.freedesktop.DBus.Error.Failed", "Can't find session /org/freedesktop/secrets/session/1", false),
    (nil, "Cannot create item in a locked collection", false),
  ]

  @Test(arguments: answers)
  func aRefusalIsKnownByItsNameAndWords(_ name: String?, _ message: String, _ refused: Bool) {
    #expect(SessionRefusal.refuses(remoteName: name, message: message) == refused)
  }
}
