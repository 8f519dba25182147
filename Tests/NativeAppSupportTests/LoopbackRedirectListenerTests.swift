import Foundation
import NativeAppSupport
import Testing
import TokenKit

/// The loopback listener, driven by real HTTP clients: libcurl through `CurlHTTPTransport`
/// for browser-like requests, plain sockets for the malformed ones.
@Suite(.timeLimit(.minutes(1))) struct LoopbackRedirectListenerTests {
  /// The browser. Its timeouts only end a test whose listener never answers: a busy
  /// machine may take seconds to run the listener's answer (5 s did not always do).
  let client = CurlHTTPTransport(connectTimeout: .seconds(60), totalTimeout: .seconds(120))

  /// Accepts `state=good`, rejects `error=…`, ignores the rest.
  static let judge: @Sendable (AuthorizationCallback) -> CallbackVerdict = { callback in
    if let error = callback["error"] { return .reject(message: "the server said \(error)") }
    return callback["state"] == "good" ? .accept : .ignore(reason: "this is not the answer to <our> request")
  }

  func get(_ url: String) async throws -> (status: Int, page: String, response: HTTPResponse) {
    let response = try await client.send(HTTPRequest(method: "GET", url: URL(string: url)!))
    return (response.status, String(decoding: response.body, as: UTF8.self), response)
  }

  @Test func bindsLoopbackOnlyAndNamesIt() throws {
    let listener = try LoopbackRedirectListener()
    #expect(listener.port != 0)
    #expect(listener.redirectURI == "http://127.0.0.1:\(listener.port)/")
    // Other tests' listeners come and go meanwhile, and a port freed by one may be bound
    // again by another on 127.0.0.1: every listener on this port must be on 127.0.0.1.
    let addresses = try RawHTTPClient.listeningAddresses(port: Int(listener.port))
    #expect(!addresses.isEmpty && Set(addresses) == ["0100007F"], "\(addresses)")
  }

  @Test func localhostGoesIntoTheURIButBindsLoopback() async throws {
    let listener = try LoopbackRedirectListener(host: "localhost", path: "/callback")
    #expect(listener.redirectURI == "http://localhost:\(listener.port)/callback")
    // Other tests' listeners come and go meanwhile, and a port freed by one may be bound
    // again by another on 127.0.0.1: every listener on this port must be on 127.0.0.1.
    let addresses = try RawHTTPClient.listeningAddresses(port: Int(listener.port))
    #expect(!addresses.isEmpty && Set(addresses) == ["0100007F"], "\(addresses)")
    let receiving = Task { try await listener.receive(timeout: .seconds(10), judge: Self.judge) }
    let answer = try await get("http://localhost:\(listener.port)/callback?code=c&state=good")
    #expect(answer.status == 200)
    #expect(try await receiving.value["code"] == "c")
  }

  @Test(.enabled(if: RawHTTPClient.otherLocalAddress != nil, "the machine has no other IPv4 address"))
  func unreachableFromOtherAddresses() throws {
    let listener = try LoopbackRedirectListener()
    let address = try #require(RawHTTPClient.otherLocalAddress)
    #expect(RawHTTPClient.isRefused(address, port: Int(listener.port)))
  }

  @Test func keepsWaitingThroughWrongPathsAndIgnoredAnswers() async throws {
    let listener = try LoopbackRedirectListener(path: "/cb")
    let receiving = Task { try await listener.receive(timeout: .seconds(20), judge: Self.judge) }
    let base = "http://127.0.0.1:\(listener.port)"

    let favicon = try await get("\(base)/favicon.ico")
    #expect(favicon.status == 404)
    #expect(try await get("\(base)/?code=c&state=good").status == 404)
    #expect(try await get("\(base)/cb/?code=c&state=good").status == 404)

    let forged = try await get("\(base)/cb?code=forged&state=bad")
    #expect(forged.status == 400)
    #expect(forged.page.contains("this is not the answer to &lt;our&gt; request"))
    #expect(!forged.page.contains("forged"))

    let good = try await get("\(base)/cb?code=the%2Fcode&state=good&iss=https%3A%2F%2Fidp.example")
    #expect(good.status == 200)
    // The default pages are any app's: no program's name, no terminal.
    #expect(good.page.contains("Signed in. You can close this window."))
    #expect(!good.page.contains("tokenctl") && !good.page.contains("terminal") && !forged.page.contains("tokenctl"))
    let headers = good.response
    #expect(headers.header("Content-Type") == "text/html; charset=utf-8")
    #expect(headers.header("Cache-Control") == "no-store")
    #expect(headers.header("Referrer-Policy") == "no-referrer")
    #expect(headers.header("Connection") == "close")
    #expect(headers.header("Content-Length") == String(headers.body.count))

    let callback = try await receiving.value
    #expect(callback["code"] == "the/code")
    #expect(callback["iss"] == "https://idp.example")
    #expect(callback.parameters.map(\.name) == ["code", "state", "iss"])

    // One answer per sign-in: nothing listens any more.
    #expect(await RawHTTPClient.isEventuallyRefused(port: Int(listener.port)))
    await #expect(throws: TokenKitError.self) { try await listener.receive(timeout: .seconds(1), judge: Self.judge) }
  }

  @Test func rejectionAnswersAndEndsTheWait() async throws {
    let listener = try LoopbackRedirectListener()
    let receiving = Task { try await listener.receive(timeout: .seconds(10), judge: Self.judge) }
    let answer = try await get("\(listener.redirectURI)?error=access_denied%3Cscript%3E&state=good")
    #expect(answer.page.contains("the server said access_denied&lt;script&gt;"))
    #expect(!answer.page.contains("<script>"))
    #expect(try await receiving.value["error"] == "access_denied<script>")
  }

  @Test func customPages() async throws {
    let listener = try LoopbackRedirectListener(
      successPage: "<p>done</p>", failurePage: { "<p>failed: \($0)</p>" })
    let receiving = Task { try await listener.receive(timeout: .seconds(10), judge: Self.judge) }
    #expect(
      try await get("\(listener.redirectURI)?state=bad&x=<i>").page
        == "<p>failed: this is not the answer to &lt;our&gt; request</p>")
    #expect(try await get("\(listener.redirectURI)?state=good").page == "<p>done</p>")
    _ = try await receiving.value
  }

  /// Given an ending page, the browser's answer waits for the sign-in's end: the page then
  /// names the account, or the failure and what to run next.
  @Test(arguments: [
    (SignInEnding.signedIn(account: "ada at local"), "<p>ada at local</p>"),
    (
      SignInEnding.failed(message: "refused <x>", hint: "Run `tokenctl login local`."),
      "<p>refused <x> / Run `tokenctl login local`.</p>"
    ),
  ])
  func theAnswerWaitsForHowTheSignInEnded(ending: SignInEnding, page: String) async throws {
    let listener = try LoopbackRedirectListener(
      successPage: "<p>back</p>",
      endingPage: { ending in
        switch ending {
        case .signedIn(let account): "<p>\(account)</p>"
        case .failed(let message, let hint): "<p>\(message) / \(hint ?? "")</p>"
        }
      }, firstBytesTimeout: .seconds(2), answerHold: .seconds(50))
    let receiving = Task { try await listener.receive(timeout: .seconds(10), judge: Self.judge) }
    let browser = Task { try await get("\(listener.redirectURI)?code=c&state=good") }
    #expect(try await receiving.value["code"] == "c")
    // The code is with the caller, the browser still waits; once told, it gets the page.
    listener.finish(ending)
    let answer = try await browser.value
    #expect(answer.status == 200)
    #expect(answer.page == page)
    // Told twice (a caller's mistake): nothing more is sent, nothing breaks.
    listener.finish(.signedIn(account: "grace"))
  }

  @Test func aHeldAnswerNobodyFinishesGetsThePlainPageAfterTheHold() async throws {
    let listener = try LoopbackRedirectListener(
      successPage: "<p>back</p>", failurePage: { "<p>failed: \($0)</p>" }, endingPage: { _ in "<p>ended</p>" },
      firstBytesTimeout: .seconds(2), answerHold: .milliseconds(200))
    let receiving = Task { try await listener.receive(timeout: .seconds(10), judge: Self.judge) }
    #expect(try await get("\(listener.redirectURI)?code=c&state=good").page == "<p>back</p>")
    _ = try await receiving.value
    listener.finish(.signedIn(account: "late"))

    let refusing = try LoopbackRedirectListener(
      successPage: "<p>back</p>", failurePage: { "<p>failed: \($0)</p>" }, endingPage: { _ in "<p>ended</p>" },
      firstBytesTimeout: .seconds(2), answerHold: .milliseconds(200))
    let refused = Task { try await refusing.receive(timeout: .seconds(10), judge: Self.judge) }
    #expect(try await get("\(refusing.redirectURI)?error=denied").page == "<p>failed: the server said denied</p>")
    _ = try await refused.value
  }

  @Test func refusesOtherMethodsHostsAndMalformedOrOversizedRequests() async throws {
    let listener = try LoopbackRedirectListener()
    let receiving = Task { try await listener.receive(timeout: .seconds(20), judge: Self.judge) }
    let port = Int(listener.port)
    let host = "Host: 127.0.0.1:\(port)\r\n"

    let post = try await RawHTTPClient.exchange(
      port: port, "POST /?code=c&state=good HTTP/1.1\r\n\(host)Content-Length: 3\r\n\r\nabc")
    #expect(post.status == 405)
    #expect(post.head.contains("\r\nAllow: GET"))

    let rebound = try await RawHTTPClient.exchange(
      port: port, "GET /?code=c&state=good HTTP/1.1\r\nHost: evil.example\r\n\r\n")
    #expect(rebound.status == 400)

    let garbage = try await RawHTTPClient.exchange(port: port, "HELLO\r\n\r\n")
    #expect(garbage.status == 400)

    let huge = "GET /?code=c&state=good HTTP/1.1\r\n\(host)X-Padding: \(String(repeating: "a", count: 9000))\r\n\r\n"
    let oversized = try await RawHTTPClient.exchange(port: port, huge)
    #expect(oversized.status == 431)

    let bareLF = try await RawHTTPClient.exchange(port: port, "GET /?code=lf&state=good HTTP/1.1\n\(host)\n")
    #expect(bareLF.status == 200)
    #expect(try await receiving.value["code"] == "lf")
  }

  /// Browsers open spare connections they may never use. One that stays silent, and that
  /// the listener keeps open for longer than the test runs, does not delay the browser's
  /// request. A listener that served one connection at a time would answer only once the
  /// spare one is closed, an hour on, and the suite's time limit fails the test; no bound on
  /// how long the answer took, which load stretches.
  @Test func anIdleConnectionDoesNotHoldUpTheBrowser() async throws {
    let listener = try LoopbackRedirectListener(firstBytesTimeout: .seconds(3600))
    let receiving = Task { try await listener.receive(timeout: .seconds(600), judge: Self.judge) }
    try await RawHTTPClient.waitUntilServing(port: Int(listener.port))
    let idle = try RawHTTPClient.connect(port: Int(listener.port)).get()
    defer { close(idle) }
    #expect(try await get("\(listener.redirectURI)?code=c&state=good").status == 200)
    #expect(try await receiving.value["code"] == "c")
  }

  /// The error says it timed out; no bound on how long that took, which a busy machine
  /// stretches. The time limit only ends a wait that never times out.
  @Test(.timeLimit(.minutes(10))) func timesOut() async throws {
    let listener = try LoopbackRedirectListener()
    let error = await #expect(throws: TokenKitError.self) {
      try await listener.receive(timeout: .milliseconds(500), judge: Self.judge)
    }
    #expect(error?.code == .signInTimedOut)
    #expect(error?.message == "no answer from the browser within 0.5 s")
    #expect(error?.remedy == .finishSignIn(type: nil))
    #expect(await RawHTTPClient.isEventuallyRefused(port: Int(listener.port)))
  }

  /// Cancelled, the wait ends with `CancellationError`; left to run its course, it would
  /// end with the timeout's error instead, so the error is the test, not the time taken.
  @Test func cancellationStopsPromptly() async throws {
    let listener = try LoopbackRedirectListener()
    let receiving = Task { try await listener.receive(timeout: .seconds(600), judge: Self.judge) }
    try await Task.sleep(for: .milliseconds(100))
    receiving.cancel()
    await #expect(throws: CancellationError.self) { try await receiving.value }
  }

  @Test func closeEndsAWait() async throws {
    let listener = try LoopbackRedirectListener()
    let receiving = Task { try await listener.receive(timeout: .seconds(30), judge: Self.judge) }
    try await Task.sleep(for: .milliseconds(100))
    listener.close()
    let error = await #expect(throws: TokenKitError.self) { try await receiving.value }
    #expect(error?.code == .signInFailed)

    let closed = try LoopbackRedirectListener()
    closed.close()
    await #expect(throws: TokenKitError.self) { try await closed.receive(timeout: .seconds(1), judge: Self.judge) }
  }

  @Test func aTakenPortIsReportedWithAHint() throws {
    let first = try LoopbackRedirectListener()
    let error = #expect(throws: TokenKitError.self) { try LoopbackRedirectListener(port: first.port) }
    #expect(error?.code == .signInFailed)
    #expect(error?.message.contains("127.0.0.1:\(first.port)") == true)
    #expect(error?.recovery != nil)
  }

  @Test func aFixedPortIsUsed() throws {
    let probe = try LoopbackRedirectListener()
    let port = probe.port
    probe.close()
    let listener = try LoopbackRedirectListener(port: port, path: "callback")
    #expect(listener.redirectURI == "http://127.0.0.1:\(port)/callback")
  }

  @Test func onlyLoopbackHosts() {
    #expect(throws: TokenKitError.self) { try LoopbackRedirectListener(host: "example.com") }
  }
}
