/// Why a request got no usable HTTP response. Never an OAuth error: a dead network says
/// nothing about the tokens, so it never invalidates an account.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
  public enum Kind: String, Sendable, Hashable {
    /// The host name did not resolve.
    case dnsFailure = "dns-failure"
    /// Nothing listens at the address, or the connection was reset.
    case connectionFailed = "connection-failed"
    /// No complete response within the timeout.
    case timedOut = "timed-out"
    /// TLS failed: certificate, handshake.
    case tls
    /// The response body exceeds `HTTPTransportLimits.maximumBodySize`.
    case responseTooLarge = "response-too-large"
    /// A malformed response or another failure.
    case other
  }

  public var kind: Kind
  /// The host and what happened, for the user; never a secret.
  public var message: String

  public init(_ kind: Kind, _ message: String) {
    self.kind = kind
    self.message = message
  }

  public var description: String { message }
}
