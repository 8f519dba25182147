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
  /// control character, none of which names a server, and none of which may reach a rule.
  public init?(requestFor url: String, defaultScheme: String = "https") {
    guard !url.isEmpty, !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f }) else {
      return nil
    }
    var scheme = defaultScheme
    var rest = Substring(url)
    if let separator = url.firstRange(of: "://") {
      scheme = url[..<separator.lowerBound].lowercased()
      rest = url[separator.upperBound...]
      guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) else {
        return nil
      }
    }
    let slash = rest.firstIndex(of: "/") ?? rest.endIndex
    var authority = rest[..<slash]
    var username: Substring?
    if let at = authority.lastIndex(of: "@") {
      username = authority[..<at]
      authority = authority[authority.index(after: at)...]
    }
    let host = authority.lowercased()
    guard !host.isEmpty, !host.contains("@"), !rest.contains("?"), !rest.contains("#") else { return nil }
    // A password has no place in a URL a tool names a server with.
    if let username { guard !username.isEmpty, !username.contains(":") else { return nil } }
    self.init([Attribute("protocol", scheme), Attribute("host", host)])
    if let username { self["username"] = String(username) }
    let path = rest[slash...].drop { $0 == "/" }
    if !path.isEmpty { self["path"] = String(path) }
  }
}
