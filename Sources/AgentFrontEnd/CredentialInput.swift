/// git's credential request (git-credential(1)) as a client sends it to the agent: only the
/// attributes the agent reads to answer `get`, so that a password git holds for the remote,
/// a `wwwauth[]` challenge or a helper's `state[]` never leave the client's process.
///
/// The socket's peer is only known to run as this user, and `TOKENCTL_AGENT_SOCKET` may
/// name any socket: it is told what it needs to answer, and no more.
///
/// The agent's answer must stay the one the direct path gives: so a request the direct
/// path would refuse for a line of its own (`CredentialMessage.parse`: no `=`, an empty
/// key, a carriage return or NUL, a line over its limit, text that is not UTF-8, more than
/// its whole limit) is not sent at all, and the direct path refuses it in its words. On
/// bytes: the front end reads it, where String's searches page in tables.
public enum CredentialInput {
  /// What the agent reads of a request (CredentialHelpers): `protocol`, `host`, `path`
  /// and `username` choose the account (`CredentialRequest`), `url` stands for them, and
  /// `capability[]` says whether git takes a bearer token (`CredentialChoice`).
  public static let attributes = ["protocol", "host", "path", "username", "url", "capability[]"]

  /// The longest line git's request may have: the core's `CredentialMessage.maximumLineLength`,
  /// which the front end does not link (a test checks the two agree).
  public static let lineLimit = 64 * 1024

  /// The lines of `input` the agent reads, up to the request's blank line, in their order;
  /// nil when it is not to be sent: a line the direct path refuses, or a `url` with a
  /// user's part (`user:password@`), which may hold a password.
  public static func forAgent(_ input: [UInt8]) -> String? {
    guard input.count <= FrontEnd.credentialInputLimit else { return nil }
    var kept: [UInt8] = []
    var start = 0
    while start < input.count {
      var end = start
      while end < input.count, input[end] != 10 { end += 1 }
      let line = input[start..<end]
      if line.isEmpty { break }
      guard line.count <= lineLimit, !line.contains(0), !line.contains(13),
        let equals = line.firstIndex(of: UInt8(ascii: "=")), equals > line.startIndex
      else { return nil }
      let key = String(decoding: line[..<equals], as: UTF8.self)
      if attributes.contains(key) {
        if key == "url", line[equals...].contains(UInt8(ascii: "@")) { return nil }
        kept += line
        kept.append(10)
      }
      start = end + 1
    }
    return String(validating: input, as: UTF8.self) == nil ? nil : String(decoding: kept, as: UTF8.self)
  }
}
