/// How the authorization response comes back to us (RFC 8252 §7).
public enum RedirectPolicy: Sendable, Hashable {
  /// A loopback listener (RFC 8252 §7.3). `port` nil means any free port, which the
  /// server must accept for loopback redirects (§7.3: "MUST allow any port").
  /// `host` is `127.0.0.1` unless the provider registers `localhost`.
  case loopback(host: String = "127.0.0.1", port: UInt16? = nil, path: String = "/")
  /// The user copies the redirected URL or the code back into the terminal, for servers
  /// that only know an out-of-band URI such as `urn:ietf:wg:oauth:2.0:oob`, and for SSH
  /// sessions where no loopback listener can be reached.
  case manualPaste(redirectURI: String)

  /// How `types` shows it.
  public var summary: String {
    switch self {
    case .loopback(let host, let port, let path):
      return "http://\(host):\(port.map(String.init) ?? "<any port>")\(path)"
    case .manualPaste(let uri):
      return "paste (\(uri))"
    }
  }
}
