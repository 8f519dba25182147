#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One HTTP request, as the OAuth model builds it and an `HTTPTransport` sends it.
///
/// The body and some headers carry secrets (codes, refresh tokens, client secrets), so the
/// descriptions show the method and URL only.
public struct HTTPRequest: Sendable, Hashable, CustomStringConvertible {
  public var method: String
  public var url: URL
  /// Header fields in order; names as written, compared case-insensitively by servers.
  public var headers: [HTTPHeader]
  public var body: [UInt8]?

  public init(method: String, url: URL, headers: [HTTPHeader] = [], body: [UInt8]? = nil) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
  }

  /// A form POST (`application/x-www-form-urlencoded`, RFC 6749 Appendix B).
  public static func form(
    _ url: URL, _ fields: [(String, String)], headers: [HTTPHeader] = []
  )
    -> HTTPRequest
  {
    HTTPRequest(
      method: "POST", url: url,
      headers: headers + [
        HTTPHeader("Content-Type", "application/x-www-form-urlencoded"),
        HTTPHeader("Accept", "application/json"),
      ],
      body: Array(FormEncoding.encode(fields).utf8))
  }

  public var description: String { "\(method) \(url.absoluteString)" }
}

/// A header field.
public struct HTTPHeader: Sendable, Hashable {
  public var name: String
  public var value: String
  public init(_ name: String, _ value: String) {
    self.name = name
    self.value = value
  }

  /// Whether `byte` may appear in a field name or a method: RFC 9110 §5.6.2 `tchar`.
  public static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default:
      return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
  }
}
