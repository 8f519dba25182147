import CredentialHelpers

/// git's credential protocol, as `tokenctl credential` reads it and answers.
enum CredentialFuzzing {
  /// Labels: `request` (a message with protocol and host), `partial` (a message without
  /// them), `refused`.
  static func run(_ bytes: [UInt8]) -> String {
    let message: CredentialMessage
    do {
      message = try CredentialMessage.parse(bytes)
    } catch {
      _ = error.description
      return "refused"
    }
    // What the helper asks of every message it acts on.
    _ = message.values("capability")
    _ = message.values("wwwauth")
    _ = message["protocol"]
    // Whatever parses must serialize (the helper echoes attributes back to git) and read
    // back as the same message: else a value could smuggle in attributes of its own.
    let text: String
    do {
      text = try message.serialized()
    } catch {
      preconditionFailure("a parsed credential message does not serialize: \(error)")
    }
    guard let again = try? CredentialMessage.parse(Array(text.utf8)) else {
      preconditionFailure("a serialized credential message does not parse")
    }
    precondition(again == message, "a credential message changed through serialization")
    precondition((try? again.serialized()) == text, "serialization is not stable")
    do {
      try message.requireProtocolAndHost()
      return "request"
    } catch {
      return "partial"
    }
  }
}
