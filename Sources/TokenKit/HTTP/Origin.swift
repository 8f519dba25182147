#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where a request goes, as far as trusting it with a token is concerned: scheme, host
/// and port (RFC 6454 §4). A token meant for `api.example.org` is not meant for
/// `api.example.org:8443`, another server on the same host, nor for plain http.
public struct Origin: Sendable, Hashable, CustomStringConvertible {
  /// `http` or `https`, lowercased.
  public var scheme: String
  /// The host, lowercased, an IPv6 literal without its brackets.
  public var host: String
  /// The port, the scheme's default (443, 80) when the URL names none.
  public var port: Int

  public init(scheme: String, host: String, port: Int? = nil) {
    self.scheme = scheme.lowercased()
    var host = host.lowercased()
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    self.host = host
    self.port = port ?? (self.scheme == "http" ? 80 : 443)
  }

  /// The origin of an http or https URL with a host; nil for anything else.
  public init?(_ url: URL) {
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
      let host = url.host(), !host.isEmpty
    else { return nil }
    self.init(scheme: scheme, host: host, port: url.port)
  }

  /// The origin a user or a type names by host: `HOST`, `HOST:PORT` or `[V6]:PORT`, which
  /// mean https on that port (443 when none is given); or an origin written as a URL,
  /// `http://127.0.0.1:8080`, for anything else. Nil when it is neither.
  public init?(naming text: String) {
    if text.contains("://") {
      guard let url = URL(string: text), url.path().isEmpty || url.path() == "/", url.query() == nil,
        url.user() == nil
      else { return nil }
      self.init(url)
      return
    }
    guard let url = URL(string: "https://\(text)"), url.path().isEmpty, url.user() == nil else { return nil }
    self.init(url)
  }

  /// How a person names it: `host` or `host:port` for https, the URL's origin otherwise.
  public var description: String {
    let name = host.contains(":") ? "[\(host)]" : host
    if scheme == "https" { return port == 443 ? name : "\(name):\(port)" }
    return "\(scheme)://\(name)" + (port == 80 ? "" : ":\(port)")
  }
}
