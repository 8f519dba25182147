/// Sends HTTP requests: injected wherever the OAuth model talks to a server, so that flows
/// run against a real transport, a test server, or a scripted one alike.
///
/// ## Implementation requirements
/// - Do not follow redirects: OAuth endpoints answer directly (RFC 6749 §3.2 forbids
///   relying on redirects from the token endpoint), and following one could resend a
///   secret to another host.
/// - Refuse a response body larger than `HTTPTransportLimits.maximumBodySize` without
///   reading it all, and bound the whole exchange by a timeout.
/// - Throw `TransportError` for every failure to get a response; an HTTP error status is
///   a response, not an error.
/// - Never put the request body or headers in an error or a log.
public protocol HTTPTransport: Sendable {
  func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse
}

/// The limits every transport applies.
public enum HTTPTransportLimits {
  /// No token, device or discovery response comes near this: a JWKS with a dozen keys is
  /// under 20 KiB. Anything larger is a misconfigured or hostile server.
  public static let maximumBodySize = 1 << 20
  /// Long enough for a slow identity provider on a poor connection; short enough that a
  /// hung server does not hang a git command for minutes.
  public static let connectTimeoutSeconds = 10
  public static let totalTimeoutSeconds = 30
}
