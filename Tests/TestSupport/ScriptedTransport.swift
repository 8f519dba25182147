import Synchronization
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An `HTTPTransport` that answers from a script instead of the network, and records what
/// it was asked, for tests of code that talks to an authorization server.
///
/// Either a handler computes each answer (route on `request.url.path()`, delay, fail), or
/// a queue of canned answers is served in order; a request beyond the end of the queue
/// fails with a `TransportError`, so a test that expected fewer requests sees it.
public final class ScriptedTransport: HTTPTransport, Sendable {
  public typealias Handler = @Sendable (HTTPRequest) async throws(TransportError) -> HTTPResponse

  /// A request as the transport received it, with its form body decoded.
  public struct RecordedRequest: Sendable, Hashable, CustomStringConvertible {
    public var request: HTTPRequest
    /// The body's `application/x-www-form-urlencoded` fields, in order; empty without a body.
    public var form: [Field]

    public struct Field: Sendable, Hashable {
      public var name: String
      public var value: String
      public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
      }
    }

    public init(_ request: HTTPRequest) {
      self.request = request
      form =
        request.body.map { FormEncoding.decode(String(decoding: $0, as: UTF8.self)) }?.map { Field($0.0, $0.1) }
        ?? []
    }

    public var method: String { request.method }
    public var url: URL { request.url }
    public var headers: [HTTPHeader] { request.headers }
    /// The body as text, for assertions about what was not sent.
    public var bodyText: String { request.body.map { String(decoding: $0, as: UTF8.self) } ?? "" }

    /// The first value of the header `name`, ignoring case.
    public func header(_ name: String) -> String? {
      headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The first value of the form field `name`.
    public subscript(field name: String) -> String? { form.first { $0.name == name }?.value }

    /// The names of the form fields, in order.
    public var fieldNames: [String] { form.map(\.name) }

    /// The query parameters of the URL, decoded.
    public var query: [Field] {
      (url.query(percentEncoded: true)).map { FormEncoding.decode($0).map { Field($0.0, $0.1) } } ?? []
    }

    // The body may hold secrets: a failing test prints the method and URL only.
    public var description: String { request.description }
  }

  private let handler: Handler
  private let recorded = Mutex<[RecordedRequest]>([])

  /// A transport that asks `handler` for every answer.
  public init(handler: @escaping Handler) {
    self.handler = handler
  }

  /// A transport that serves `script` in order: a response, or a failure to get one.
  public convenience init(script: [Result<HTTPResponse, TransportError>]) {
    let queue = Mutex(script[...])
    self.init { (request: HTTPRequest) async throws(TransportError) -> HTTPResponse in
      guard let next = queue.withLock({ $0.popFirst() }) else {
        throw TransportError(.other, "the script has no answer left for \(request)")
      }
      return try next.get()
    }
  }

  /// A transport that serves `responses` in order.
  public convenience init(responses: [HTTPResponse]) {
    self.init(script: responses.map { .success($0) })
  }

  public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
    recorded.withLock { $0.append(RecordedRequest(request)) }
    return try await handler(request)
  }

  /// Every request received so far, in order.
  public var requests: [RecordedRequest] { recorded.withLock { $0 } }

  /// How many requests were received.
  public var requestCount: Int { recorded.withLock { $0.count } }

  /// The requests whose URL path is `path`.
  public func requests(to path: String) -> [RecordedRequest] {
    requests.filter { $0.url.path() == path }
  }

  // MARK: Canned responses

  /// A response with `body` as JSON text.
  public static func json(
    _ status: Int = 200, _ body: String, headers: [HTTPHeader] = [],
    contentType: String = "application/json"
  ) -> HTTPResponse {
    HTTPResponse(status: status, headers: [HTTPHeader("Content-Type", contentType)] + headers, body: Array(body.utf8))
  }

  /// A response with `object` encoded as JSON.
  public static func json(_ status: Int = 200, object: [String: JSONValue], headers: [HTTPHeader] = []) -> HTTPResponse
  {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    // Encoding a JSONValue cannot fail: it holds only JSON's own types.
    let body = (try? encoder.encode(JSONValue.object(object))).map { Array($0) } ?? []
    return HTTPResponse(status: status, headers: [HTTPHeader("Content-Type", "application/json")] + headers, body: body)
  }

  /// A successful token response (RFC 6749 §5.1).
  public static func tokens(
    access: String, refresh: String? = nil, idToken: String? = nil, expiresIn: Double? = 3600,
    scope: String? = nil
  ) -> HTTPResponse {
    var object: [String: JSONValue] = ["access_token": .string(access), "token_type": .string("Bearer")]
    if let refresh { object["refresh_token"] = .string(refresh) }
    if let idToken { object["id_token"] = .string(idToken) }
    if let expiresIn { object["expires_in"] = .number(expiresIn) }
    if let scope { object["scope"] = .string(scope) }
    return json(object: object)
  }

  /// An OAuth error response (RFC 6749 §5.2).
  public static func oauthError(
    _ code: String, description: String? = nil, status: Int = 400, headers: [HTTPHeader] = []
  ) -> HTTPResponse {
    var object: [String: JSONValue] = ["error": .string(code)]
    if let description { object["error_description"] = .string(description) }
    return json(status, object: object, headers: headers)
  }

  /// A response with a plain body and media type.
  public static func text(_ status: Int, _ body: String, contentType: String = "text/plain") -> HTTPResponse {
    HTTPResponse(status: status, headers: [HTTPHeader("Content-Type", contentType)], body: Array(body.utf8))
  }
}
