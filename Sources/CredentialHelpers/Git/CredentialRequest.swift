/// What a credential request asks about, as the choosing policy reads it: git's
/// `protocol`, `host`, `path` and `username` (git-credential(1), "INPUT/OUTPUT FORMAT").
public struct CredentialRequest: Sendable, Hashable {
  /// `protocol`, lowercased: `https`, `http`, or another git may send (`ssh`), which no
  /// type serves.
  public var scheme: String
  /// `host`, lowercased, with the port when the remote URL names one (`git.example.org:3000`).
  public var host: String
  /// `path` without its leading slash; git sends it only when `credential.useHttpPath` is set.
  public var path: String?
  /// `username`, as the remote URL gives it (`https://NAME@host/…`).
  public var username: String?

  public init(scheme: String, host: String, path: String? = nil, username: String? = nil) {
    self.scheme = scheme.lowercased()
    self.host = host.lowercased()
    self.path = path
    self.username = username
  }

  /// The request a message makes; nil without `protocol` or `host`, which no answer can do without.
  public init?(_ message: CredentialMessage) {
    guard let scheme = message["protocol"], let host = message["host"] else { return nil }
    self.init(scheme: scheme, host: host, path: message["path"], username: message["username"])
  }

  /// Whether this is plain http to this machine: the only plain http that may carry a token.
  var isPlainHTTPToLoopback: Bool { scheme == "http" && GitHost.isLoopback(host) }
}
