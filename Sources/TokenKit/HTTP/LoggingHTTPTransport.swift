/// A transport that says what it sends and gets, for `--verbose` and `TOKENCTL_LOG=debug`.
///
/// It logs the method, the URL without its query values, the status, the body's size and
/// the time taken; never a header or a body, where tokens, codes and client secrets
/// travel, and never a query value, where a user's request URL may carry one.
public struct LoggingHTTPTransport: HTTPTransport {
  public var base: any HTTPTransport
  public var log: @Sendable (String) -> Void

  public init(_ base: any HTTPTransport, log: @escaping @Sendable (String) -> Void) {
    self.base = base
    self.log = log
  }

  public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
    let target = "\(request.method) \(Self.redacted(request.url.absoluteString))"
    let clock = ContinuousClock()
    let start = clock.now
    log("\(target) (\(request.body?.count ?? 0) bytes of body)")
    do {
      let response = try await base.send(request)
      log(
        "\(target): HTTP \(response.status), \(response.body.count) bytes, \(Self.milliseconds(clock.now - start)) ms")
      return response
    } catch {
      log("\(target): no response after \(Self.milliseconds(clock.now - start)) ms: \(error.message)")
      throw error
    }
  }

  /// `url` with every query value and any fragment or user information left out.
  static func redacted(_ url: String) -> String {
    var text = url
    if let hash = text.firstIndex(of: "#") { text = String(text[..<hash]) }
    if let scheme = text.firstRange(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@"),
      !text[scheme.upperBound..<at].contains("/")
    {
      text = String(text[..<scheme.upperBound]) + String(text[text.index(after: at)...])
    }
    guard let question = text.firstIndex(of: "?") else { return text }
    let keys = text[text.index(after: question)...].split(separator: "&").map { pair in
      "\(pair.split(separator: "=", maxSplits: 1).first ?? "")=…"
    }
    return String(text[...question]) + keys.joined(separator: "&")
  }

  private static func milliseconds(_ duration: Duration) -> Int {
    Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
  }
}
