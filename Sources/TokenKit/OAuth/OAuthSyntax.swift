#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The syntax rules that values from files and the command line must follow before they
/// reach a request, each written once: descriptor files, config.toml and `--issuer` all
/// ask here.
public enum OAuthSyntax {
  /// VSCHAR, RFC 6749 Appendix A.1 and A.2: a `client_id` or `client_secret` is non-empty
  /// printable ASCII, space included.
  public static func isVisibleASCII(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.allSatisfy { (0x20...0x7E).contains($0) }
  }

  /// `scope-token = 1*NQCHAR`, RFC 6749 §3.3 and Appendix A.4: printable ASCII without
  /// space, `"` and `\`.
  public static func isScopeToken(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
  }

  /// `text` as an endpoint URL: with a host, over https, or http to this machine
  /// (RFC 6749 §3.1 and §3.2, RFC 8252 §8.3, ``Loopback``); nil otherwise.
  public static func endpointURL(_ text: String) -> URL? {
    guard let url = URL(string: text), url.host()?.isEmpty == false, Loopback.isSecureOrLoopback(url) else {
      return nil
    }
    return url
  }

  /// Whether `url` may be an issuer identifier beyond being an endpoint URL: no query and
  /// no fragment (RFC 8414 §2, OpenID Connect Discovery §2).
  public static func isIssuerShaped(_ url: URL) -> Bool {
    url.query() == nil && url.fragment() == nil
  }

  /// `text` as an issuer identifier: an endpoint URL without query or fragment; nil
  /// otherwise.
  public static func issuerURL(_ text: String) -> URL? {
    endpointURL(text).flatMap { isIssuerShaped($0) ? $0 : nil }
  }
}
