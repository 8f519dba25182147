extension CredentialMessage {
  /// The `get` request for `url` that a tool other than git makes: `protocol`, `host`
  /// (with any port) and `path`, as git would send them for that remote, so that every
  /// tool is answered by the one host → account rule (``CredentialAccountChooser``).
  ///
  /// `url` is `scheme://host[:port][/path]`, or `host[:port][/path]` alone, which is how
  /// Docker's credential helpers are asked (`registry.example.org`, `127.0.0.1:5000`): a
  /// URL without a scheme is `defaultScheme`'s. Nil for anything else: no host, a user
  /// name (`user@host`), a query, a fragment, whitespace or a control character, none of
  /// which a tool names a server with, and none of which may reach a rule.
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
    let host = rest[..<slash].lowercased()
    guard !host.isEmpty, !host.contains("@"), !rest.contains("?"), !rest.contains("#") else { return nil }
    self.init([Attribute("protocol", scheme), Attribute("host", host)])
    let path = rest[slash...].drop { $0 == "/" }
    if !path.isEmpty { self["path"] = String(path) }
  }
}
