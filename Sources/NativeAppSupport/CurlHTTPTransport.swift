import CCurl
import ProcessRuntime
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// Sends HTTP requests with libcurl, the way the model's `HTTPTransport` requires: no
/// redirects, bounded time and size, and no secret in any error.
///
/// Each request gets its own easy handle on a thread of its own, so the blocking
/// `curl_easy_perform` never holds a thread of Swift's cooperative pool. A command sends a
/// handful of requests, so the lost connection reuse costs less than sharing handles
/// across threads would in complexity.
///
/// Proxies are libcurl's business: it reads `https_proxy`, `http_proxy` (lower case only,
/// for the CGI reason in curl's documentation), `all_proxy` and `no_proxy` from the
/// environment itself, as the `curl` tool does, and this type sets no proxy option that
/// would override them.
///
/// Certificates are verified against the system's store (Debian:
/// /etc/ssl/certs/ca-certificates.crt, which `update-ca-certificates` keeps), or against
/// the PEM file `SSL_CERT_FILE` names, as OpenSSL itself, Python and Go do: a private CA
/// for one program without trusting it system-wide. Verification is never turned off.
public struct CurlHTTPTransport: HTTPTransport {
  /// How long to wait for the TCP (and proxy) connection.
  public var connectTimeout: Duration
  /// How long the whole exchange may take, connection included.
  public var totalTimeout: Duration
  /// The largest response body accepted, in bytes.
  public var maximumBodySize: Int
  /// The `User-Agent` sent unless the request names its own.
  public var userAgent: String
  /// The CA certificates to trust instead of the system's (a PEM file); nil: the system's.
  public var certificateAuthorities: String?

  public init(
    connectTimeout: Duration = .seconds(HTTPTransportLimits.connectTimeoutSeconds),
    totalTimeout: Duration = .seconds(HTTPTransportLimits.totalTimeoutSeconds),
    maximumBodySize: Int = HTTPTransportLimits.maximumBodySize,
    userAgent: String = "tokenctl"
  ) {
    self.connectTimeout = connectTimeout
    self.totalTimeout = totalTimeout
    self.maximumBodySize = maximumBodySize
    self.userAgent = userAgent
    if let path = getenv("SSL_CERT_FILE").map({ String(cString: $0) }), !path.isEmpty {
      certificateAuthorities = path
    }
  }

  public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
    if let failure = Self.loadFailure {
      throw TransportError(
        .other,
        "cannot send a request to \(CurlExchange.place(of: request.url)): libcurl could not be loaded (\(failure));"
          + " install it (Debian: apt-get install libcurl4)")
    }
    let exchange = CurlExchange(request, settings: self)
    let result = await withTaskCancellationHandler {
      await withCheckedContinuation {
        (continuation: CheckedContinuation<Result<HTTPResponse, TransportError>, Never>) in
        let started = DetachedThread.start { continuation.resume(returning: exchange.perform()) }
        if !started {
          continuation.resume(
            returning: .failure(TransportError(.other, "no thread to send the request to \(exchange.place)")))
        }
      }
    } onCancel: {
      exchange.cancel()
    }
    return try result.get()
  }

  /// Why libcurl is not usable, or nil once it is loaded and initialized. Loading on the
  /// first request, not at start-up, is what keeps commands that send nothing (`token`
  /// with a valid token, `list`, the git helper's `get`) as quick to start as
  /// `secret-tool`: programs that never send a request never map libcurl at all.
  private static let loadFailure: String? = tokenctl_curl_load().map { String(cString: $0) }

  /// Loads libcurl as the first request would, and says why it cannot be used: nil when
  /// it can. For `tokenctl doctor`; a command that sends requests needs no such check.
  public static func loadLibrary() -> String? { loadFailure }
}
