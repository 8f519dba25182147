extension CredentialMessage {
  /// The `get` request for `url` that a tool other than git makes: `protocol`, `host`
  /// (with any port) and `path`, as git would send them for that remote, so that every
  /// tool is answered by the one host → account rule (``CredentialAccountChooser``).
  ///
  /// `url` is `scheme://host[:port][/path]`, or `host[:port][/path]` alone, which is how
  /// Docker's credential helpers are asked (`registry.example.org`, `127.0.0.1:5000`): a
  /// URL without a scheme is `defaultScheme`'s. A user name (`https://ada@host/`) becomes
  /// `username`, which chooses among the host's accounts as in a git remote. Nil for
  /// anything else: no host, a password in the URL, a query, a fragment, whitespace or a
  /// control character, none of which names a server, and none of which may reach a rule;
  /// and a URL whose host tools read differently (``ambiguity(in:host:)``).
  ///
  /// Case is left as written: ``CredentialRequest`` folds scheme and host when it reads
  /// them. The work is on bytes, since the agent's clients run this on their fast path
  /// (Docker's `get`), where Unicode tables and string searchers would cost a page-in each.
  public init?(requestFor url: String, defaultScheme: String = "https") {
    guard let message = try? Self.reading(url, defaultScheme: defaultScheme) else { return nil }
    self = message
  }

  /// The request for `url`, as ``init(requestFor:defaultScheme:)`` reads it, or why there is
  /// none; `line` is the input line that gave the URL, for the error.
  static func reading(
    _ url: String, defaultScheme: String = "https", line: Int? = nil
  ) throws(CredentialMessageError) -> CredentialMessage {
    let bytes = Array(url.utf8)
    guard !bytes.isEmpty, !bytes.contains(where: { $0 <= 0x20 || $0 == 0x7f }),
      !bytes.contains(UInt8(ascii: "?")), !bytes.contains(UInt8(ascii: "#"))
    else { throw .invalidURL(line: line) }
    var scheme = defaultScheme
    var start = 0
    if let separator = Self.schemeSeparator(in: bytes) {
      let name = bytes[..<separator]
      let isSchemeByte: (UInt8) -> Bool = {
        (0x61...0x7a).contains($0 | 0x20) || (0x30...0x39).contains($0) || $0 == 0x2b || $0 == 0x2d || $0 == 0x2e
      }
      guard !name.isEmpty, name.allSatisfy(isSchemeByte) else { throw .invalidURL(line: line) }
      scheme = String(decoding: name, as: UTF8.self)
      start = separator + 3
    }
    let slash = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
    var hostStart = start
    var username: ArraySlice<UInt8>?
    if let at = bytes[start..<slash].lastIndex(of: UInt8(ascii: "@")) {
      username = bytes[start..<at]
      hostStart = at + 1
    }
    let host = bytes[hostStart..<slash]
    guard !host.isEmpty else { throw .invalidURL(line: line) }
    if let ambiguity = Self.ambiguity(in: bytes[start...], host: host) { throw .ambiguousURL(ambiguity, line: line) }
    // A password has no place in a URL a tool names a server with.
    if let username {
      guard !username.isEmpty, !username.contains(UInt8(ascii: ":")) else { throw .invalidURL(line: line) }
    }
    var message = CredentialMessage([
      Attribute("protocol", scheme), Attribute("host", String(decoding: host, as: UTF8.self)),
    ])
    if let username { message["username"] = String(decoding: username, as: UTF8.self) }
    let path = bytes[slash...].drop { $0 == UInt8(ascii: "/") }
    if !path.isEmpty { message["path"] = String(decoding: path, as: UTF8.self) }
    return message
  }

  /// What in a URL (`url`, after its scheme; `host`, the host this reader found in it) the
  /// tools that send the token read as another host than this reader does, if anything:
  /// such a URL gets no answer, so that tokenctl never chooses an account for one host
  /// while the tool sends its token to another. The one place this rule is written; every
  /// helper reads its URLs here.
  static func ambiguity(
    in url: ArraySlice<UInt8>, host: ArraySlice<UInt8>
  ) -> CredentialMessageError.Ambiguity? {
    // urllib3 (pip, requests) and WHATWG readers (uv, browsers) end the host at a
    // backslash as at a slash; this reader, like Mercurial, reads on to the `@` after it.
    // So `http://EVIL\@TRUSTED/` is TRUSTED here, and pip sends to EVIL.
    if url.contains(UInt8(ascii: "\\")) { return .backslash }
    // A URL inside the URL: mercurial_keyring's key `USER@@URL` takes its user from the
    // repository's URL, so a user name of `oauth2@@http://TRUSTED/` made the key name
    // TRUSTED while Mercurial sent to the host after it. No server's path needs `://`.
    var index = url.startIndex
    while index + 2 < url.endIndex {
      if url[index] == UInt8(ascii: ":"), url[index + 1] == UInt8(ascii: "/"), url[index + 2] == UInt8(ascii: "/") {
        return .nestedURL
      }
      index += 1
    }
    // A percent-encoded host: Mercurial and requests decode it, urllib3 and this reader do
    // not, and Mercurial's own keys encode the brackets and colons of what it read as a
    // host (`%5B%3A%3A1%5D`). DNS names and IP literals hold none.
    if host.contains(UInt8(ascii: "%")) { return .percentInHost }
    // Brackets other than around an IPv6 literal (`[::1]`, `[::1]:8080`): urllib3 refuses
    // them, http.client and Mercurial take them into the name or the port.
    let open = host.filter { $0 == UInt8(ascii: "[") }.count
    let close = host.filter { $0 == UInt8(ascii: "]") }.count
    if open + close > 0 {
      guard open == 1, close == 1, host.first == UInt8(ascii: "["), let end = host.firstIndex(of: UInt8(ascii: "]")),
        end + 1 == host.endIndex || host[end + 1] == UInt8(ascii: ":")
      else { return .strayBracket }
    }
    return nil
  }

  /// Where `://` first is, when it comes before any `/`: a scheme's end.
  private static func schemeSeparator(in bytes: [UInt8]) -> Int? {
    var index = 0
    while index + 2 < bytes.count, bytes[index] != UInt8(ascii: "/") {
      if bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] == UInt8(ascii: "/")
      {
        return index
      }
      index += 1
    }
    return nil
  }
}
