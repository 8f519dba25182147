import Foundation
import NativeAppSupport
import Testing
import TokenKit

/// The transport against a real HTTP server (Python's, on 127.0.0.1) and real failures:
/// a refused port, an unresolvable name, a server that never answers.
@Suite struct CurlHTTPTransportTests {
  let transport = CurlHTTPTransport(connectTimeout: .seconds(2), totalTimeout: .seconds(5))

  /// What `/echo` saw.
  struct Echo: Decodable {
    var method: String
    var path: String
    var query: String
    var headers: [[String]]
    var body: String

    init(_ response: HTTPResponse) throws {
      self = try JSONDecoder().decode(Echo.self, from: Data(response.body))
    }

    func header(_ name: String) -> [String] {
      headers.filter { $0[0].lowercased() == name.lowercased() }.map { $0[1] }
    }
  }

  /// `https://` to a server that speaks plain HTTP: the error says the scheme is wrong,
  /// not the network.
  @Test func httpsToAPlainHTTPServerSaysTheSchemeIsWrong() async throws {
    let server = try await TestHTTPServer()
    let error = await #expect(throws: TransportError.self) {
      try await transport.send(HTTPRequest(method: "GET", url: URL(string: "https://127.0.0.1:\(server.port)/echo")!))
    }
    #expect(error?.kind == .tls)
    #expect(error?.message.contains("plain HTTP") == true, "\(String(describing: error))")
    let wording = TokenKitError(.transport(try #require(error)), while: "refresh the tokens of corp:ada")
    #expect(wording.recovery?.contains("https or http") == true, "\(wording)")
  }

  @Test func getSendsHeadersAndQuery() async throws {
    let server = try await TestHTTPServer()
    let response = try await transport.send(
      HTTPRequest(
        method: "GET", url: server.url("/echo?a=1&b=two%20words"),
        headers: [HTTPHeader("X-Custom", "value, with comma"), HTTPHeader("Accept", "application/json")]))
    #expect(response.status == 200)
    #expect(response.mediaType == "application/json")
    #expect(response.header("content-length") == String(response.body.count))
    let echo = try Echo(response)
    #expect(echo.method == "GET")
    #expect(echo.path == "/echo")
    #expect(echo.query == "a=1&b=two%20words")
    #expect(echo.header("X-Custom") == ["value, with comma"])
    #expect(echo.header("Accept") == ["application/json"])
    #expect(echo.header("User-Agent") == ["tokenctl"])
    #expect(echo.body.isEmpty)
  }

  @Test func postSendsTheBodyAsGiven() async throws {
    let server = try await TestHTTPServer()
    // Over 1 KiB, where libcurl would otherwise send `Expect: 100-continue` and wait.
    let secret = String(repeating: "s", count: 2000)
    let response = try await transport.send(
      .form(server.url("/echo"), [("grant_type", "refresh_token"), ("refresh_token", secret), ("scope", "a b")]))
    let echo = try Echo(response)
    #expect(echo.method == "POST")
    #expect(echo.body == "grant_type=refresh_token&refresh_token=\(secret)&scope=a+b")
    #expect(echo.header("Content-Type") == ["application/x-www-form-urlencoded"])
    #expect(echo.header("Content-Length") == ["\(echo.body.utf8.count)"])
    #expect(echo.header("Expect").isEmpty)
  }

  @Test func postWithoutBodyAndEmptyHeaderValue() async throws {
    let server = try await TestHTTPServer()
    let response = try await transport.send(
      HTTPRequest(method: "POST", url: server.url("/echo"), headers: [HTTPHeader("X-Empty", "")]))
    let echo = try Echo(response)
    #expect(echo.method == "POST")
    #expect(echo.body.isEmpty)
    #expect(echo.header("X-Empty") == [""])
  }

  @Test(arguments: ["DELETE", "PUT", "PATCH"])
  func otherMethods(method: String) async throws {
    let server = try await TestHTTPServer()
    let body: [UInt8]? = method == "DELETE" ? nil : Array("token=abc".utf8)
    let echo = try Echo(try await transport.send(HTTPRequest(method: method, url: server.url("/echo"), body: body)))
    #expect(echo.method == method)
    #expect(echo.body == (body.map { String(decoding: $0, as: UTF8.self) } ?? ""))
  }

  @Test(arguments: [400, 401, 404, 500, 503])
  func errorStatusesAreResponses(status: Int) async throws {
    let server = try await TestHTTPServer()
    let response = try await transport.send(HTTPRequest(method: "GET", url: server.url("/status/\(status)")))
    #expect(response.status == status)
    #expect(response.body == Array("status body".utf8))
    #expect(response.header("x-test") == "passed through")
  }

  @Test func redirectsAreNotFollowed() async throws {
    let server = try await TestHTTPServer()
    let response = try await transport.send(HTTPRequest(method: "GET", url: server.url("/redirect")))
    #expect(response.status == 302)
    #expect(response.header("Location") == "/echo")
    #expect(response.body.isEmpty)
  }

  @Test func userAgentIsConfigurable() async throws {
    let server = try await TestHTTPServer()
    let transport = CurlHTTPTransport(userAgent: "tokenctl/9.9 (test)")
    #expect(
      try Echo(try await transport.send(HTTPRequest(method: "GET", url: server.url("/echo")))).header("User-Agent") == [
        "tokenctl/9.9 (test)"
      ])
    // A header the request names itself wins.
    let named = HTTPRequest(method: "GET", url: server.url("/echo"), headers: [HTTPHeader("User-Agent", "mine")])
    #expect(try Echo(try await transport.send(named)).header("User-Agent") == ["mine"])
  }

  @Test func refusedConnection() async throws {
    let closed = try LoopbackSocket(listening: false)
    let error = await failure(
      of: HTTPRequest(method: "GET", url: URL(string: "http://127.0.0.1:\(closed.port)/token")!))
    #expect(error?.kind == .connectionFailed)
    #expect(error?.message == "could not connect to 127.0.0.1:\(closed.port) (connection refused)")
  }

  @Test func unresolvableHost() async throws {
    // `.invalid` never resolves (RFC 2606), with or without a network.
    let error = await failure(of: HTTPRequest(method: "GET", url: URL(string: "https://nonexistent.invalid/token")!))
    #expect(error?.kind == .dnsFailure)
    #expect(error?.message.contains("nonexistent.invalid") == true)
  }

  @Test(arguments: [
    "http://127.attacker.invalid/token", "http://127.0.0.1.attacker.invalid/token", "http://id.invalid/",
  ])
  func plainHTTPOffThisMachineIsRefusedBeforeAnyLookup(url: String) async throws {
    // A DNS failure would mean libcurl looked the name up: the refusal must come first.
    let error = await failure(of: HTTPRequest(method: "GET", url: try #require(URL(string: url))))
    #expect(error?.kind == .other)
    #expect(error?.message.contains("over plain http") == true)
  }

  @Test func silentServerTimesOut() async throws {
    let silent = try LoopbackSocket(listening: true)
    let transport = CurlHTTPTransport(connectTimeout: .seconds(2), totalTimeout: .seconds(2))
    let started = ContinuousClock.now
    let error = await failure(
      of: HTTPRequest(method: "GET", url: URL(string: "http://127.0.0.1:\(silent.port)/slow")!), transport: transport)
    let elapsed = ContinuousClock.now - started
    #expect(error?.kind == .timedOut)
    #expect(error?.message == "no response from 127.0.0.1:\(silent.port) within 2 s")
    // Not before its time. That it gave up at all the error says: the server never
    // answers, so without the timeout there would be no error to look at. No upper bound:
    // a machine busy with builds stretches it (CI's took 110 s, waiting for the pool).
    #expect(elapsed >= .milliseconds(1900))
  }

  @Test(arguments: ["declared", "chunked"])
  func oversizedBodyIsRefused(route: String) async throws {
    let server = try await TestHTTPServer()
    let transport = CurlHTTPTransport(maximumBodySize: 100_000)
    let started = ContinuousClock.now
    // 100 GB: reading it all would take minutes, so an answer within seconds shows the
    // transport stopped early.
    let error = await failure(
      of: HTTPRequest(method: "GET", url: server.url("/\(route)?100000000000")), transport: transport)
    #expect(error?.kind == .responseTooLarge)
    #expect(error?.message == "the response body from 127.0.0.1:\(server.port) is larger than 100000 bytes")
    #expect(ContinuousClock.now - started < .seconds(15))
  }

  @Test func defaultLimitIsOneMebibyte() async throws {
    let server = try await TestHTTPServer()
    let limit = HTTPTransportLimits.maximumBodySize
    let atLimit = try await transport.send(HTTPRequest(method: "GET", url: server.url("/chunked?\(limit)")))
    #expect(atLimit.body.count == limit)
    let error = await failure(of: HTTPRequest(method: "GET", url: server.url("/chunked?\(limit + 1)")))
    #expect(error?.kind == .responseTooLarge)
    #expect(error?.message.hasSuffix("is larger than 1 MiB") == true)
  }

  @Test func errorsShowNeitherBodyNorQuery() async throws {
    let closed = try LoopbackSocket(listening: false)
    let silent = try LoopbackSocket(listening: true)
    let server = try await TestHTTPServer()
    let quick = CurlHTTPTransport(connectTimeout: .seconds(1), totalTimeout: .seconds(1), maximumBodySize: 10)
    let targets = [
      "http://127.0.0.1:\(closed.port)", "http://127.0.0.1:\(silent.port)", "http://127.0.0.1:\(server.port)",
      "https://nonexistent.invalid", "http://user:pa55word@127.0.0.1:\(closed.port)",
    ]
    for target in targets {
      let request = HTTPRequest(
        method: "POST", url: URL(string: "\(target)/echo?code=query-s3cret#frag-s3cret")!,
        headers: [HTTPHeader("Authorization", "Bearer header-s3cret")], body: Array("client_secret=body-s3cret".utf8))
      let error = try #require(await failure(of: request, transport: quick))
      #expect(!error.message.contains("s3cret") && !error.message.contains("pa55word"), "\(error.message)")
      #expect(!error.message.contains("?") && !error.message.contains("echo"), "\(error.message)")
    }
  }

  @Test func lineBreakInHeaderIsRefused() async throws {
    let server = try await TestHTTPServer()
    let request = HTTPRequest(
      method: "GET", url: server.url("/echo"), headers: [HTTPHeader("X-Token", "abc\r\nX-Injected: s3cret")])
    let error = await failure(of: request)
    #expect(error?.kind == .other)
    #expect(error?.message.contains("s3cret") == false)
    #expect(error?.message.contains("X-Token") == true)
  }

  @Test func onlyHTTPAndHTTPS() async throws {
    let error = await failure(of: HTTPRequest(method: "GET", url: URL(string: "file:///etc/passwd")!))
    #expect(error?.kind == .other)
  }

  /// A cancelled request ends as cancelled, not as the timeout it would otherwise wait
  /// for: the error tells them apart however long a busy machine takes, where a bound on
  /// the time taken did not (CI once took 61 s).
  @Test func cancellationStopsTheRequest() async throws {
    let silent = try LoopbackSocket(listening: true)
    let transport = CurlHTTPTransport(totalTimeout: .seconds(600))
    let request = HTTPRequest(method: "GET", url: URL(string: "http://127.0.0.1:\(silent.port)/")!)
    let task = Task { try await transport.send(request) }
    try await Task.sleep(for: .milliseconds(200))
    task.cancel()
    let result = await task.result
    let error = #expect(throws: TransportError.self) { try result.get() }
    #expect(error?.message.hasSuffix("was cancelled") == true, "\(String(describing: error))")
  }

  @Test func concurrentRequests() async throws {
    let server = try await TestHTTPServer()
    let transport = transport
    try await withThrowingTaskGroup(of: Int.self) { group in
      for index in 0..<20 {
        group.addTask {
          let echo = try Echo(try await transport.send(HTTPRequest(method: "GET", url: server.url("/echo?n=\(index)"))))
          return Int(echo.query.dropFirst(2))!
        }
      }
      var seen: Set<Int> = []
      for try await index in group { seen.insert(index) }
      #expect(seen == Set(0..<20))
    }
  }

  private func failure(of request: HTTPRequest, transport: CurlHTTPTransport? = nil) async -> TransportError? {
    do {
      let response = try await (transport ?? self.transport).send(request)
      Issue.record("expected an error, got \(response)")
      return nil
    } catch {
      return error
    }
  }
}
