import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An authorization server's answer, sorted by `AuthorizationService` and decoded as the
/// product decodes a token response, a device authorization response and a discovery
/// document.
///
/// The input is an HTTP response as on the wire (`HTTP/1.1 200 OK`, fields, a blank line,
/// the body), so the fuzzer varies the status and `Content-Type` too; anything that does
/// not start with `HTTP/` is the body of a `200` `application/json` answer.
enum OAuthResponseFuzzing {
  /// Any fixed instant will do; a recent one keeps the dates realistic.
  static let receivedAt = Date(timeIntervalSince1970: 1_790_000_000)

  /// Labels, by the first decoder that accepts the body: `token`, `device`, `discovery`;
  /// else `oauth-error`, `http-error` or `refused`.
  static func run(_ bytes: [UInt8]) -> String {
    let response = Self.response(bytes)
    _ = response.description
    _ = try? AuthorizationService.body(of: response, document: "revocation response", bodyRequired: false)
    let body: [UInt8]
    do {
      body = try AuthorizationService.body(of: response, document: "token response", bodyRequired: true)
    } catch {
      switch error {
      case .oauth(let oauth, _):
        _ = oauth.description
        return "oauth-error"
      case .httpStatus: return "http-error"
      case .malformedResponse, .unusableTokens, .transport, .issuerMismatch: return "refused"
      }
    }
    var labels: [String] = []
    if token(body) { labels.append("token") }
    if device(body) { labels.append("device") }
    if discovery(body) { labels.append("discovery") }
    return labels.first ?? "refused"
  }

  /// A token response, and the token set the product stores from it.
  private static func token(_ body: [UInt8]) -> Bool {
    guard let response = try? TokenResponse(json: body) else { return false }
    _ = response.description
    _ = response.syntaxProblem
    let tokens = response.tokenSet(receivedAt: receivedAt, requestedScope: ["openid"])
    _ = tokens.description
    _ = tokens.isValid(forAtLeast: tokens.defaultRefreshMargin, clock: FixedClock(receivedAt))
    _ = tokens.summary.status(clock: FixedClock(receivedAt))
    // What was received must be storable, and read back as the same tokens.
    let stored: [UInt8]
    do {
      stored = try tokens.storageJSON()
    } catch {
      preconditionFailure("a token set from a token response cannot be stored: \(error)")
    }
    guard let loaded = try? TokenSet(storageJSON: stored, item: "fuzz") else {
      preconditionFailure("a stored token set does not read back")
    }
    precondition(
      loaded.accessToken == tokens.accessToken && loaded.refreshToken == tokens.refreshToken
        && loaded.idToken == tokens.idToken,
      "a stored token set reads back with other tokens")
    return true
  }

  private static func device(_ body: [UInt8]) -> Bool {
    guard let response = try? DeviceAuthorizationResponse(json: body) else { return false }
    _ = response.description
    return true
  }

  /// A discovery document, checked against the issuer it names (the fuzzer cannot guess
  /// a fixed one) and against one it does not.
  private static func discovery(_ body: [UInt8]) -> Bool {
    _ = try? AuthorizationServerMetadata(json: body, expectedIssuer: "https://issuer.example")
    guard let issuer = JSONValue.parseObject(body)?["issuer"]?.stringValue,
      let metadata = try? AuthorizationServerMetadata(json: body, expectedIssuer: issuer)
    else { return false }
    precondition(metadata.issuer == issuer, "metadata accepted for another issuer")
    if let url = URL(string: issuer) { _ = AuthorizationServerMetadata.discoveryURLs(for: url) }
    return true
  }

  /// Splits a wire-format response into status, fields and body.
  static func response(_ bytes: [UInt8]) -> HTTPResponse {
    let json = [HTTPHeader("Content-Type", "application/json")]
    guard bytes.starts(with: Array("HTTP/".utf8)) else { return HTTPResponse(status: 200, headers: json, body: bytes) }
    var lines: [String] = []
    var start = 0
    var bodyStart = bytes.count
    while start < bytes.count {
      let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
      var line = bytes[start..<end]
      if line.last == 0x0D { line = line.dropLast() }
      if line.isEmpty {
        bodyStart = min(end + 1, bytes.count)
        break
      }
      lines.append(String(decoding: line, as: UTF8.self))
      start = end + 1
    }
    let statusLine = lines.first?.split(separator: " ", omittingEmptySubsequences: true) ?? []
    let status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
    let headers = lines.dropFirst().compactMap { line -> HTTPHeader? in
      guard let colon = line.firstIndex(of: ":") else { return nil }
      let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
      return HTTPHeader(String(line[..<colon]), String(value))
    }
    return HTTPResponse(status: status, headers: headers, body: Array(bytes[bodyStart...]))
  }
}
