import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit

@Suite(.timeLimit(.minutes(1))) struct OAuthDeviceFlowTests {
  typealias F = OAuthFixtures
  typealias T = ScriptedTransport

  /// A device flow against a scripted server: the device endpoint answers `device`, the
  /// token endpoint answers `polls` in order. Sleeping advances the clock instead of
  /// waiting, and is recorded.
  final class Harness: Sendable {
    let clock = TestClock()
    let transport: ScriptedTransport
    let sleeps = Mutex<[Double]>([])
    let presented = Mutex<[Int]>([])
    let descriptor: EndpointDescriptor

    init(
      device: HTTPResponse = T.json(
        200,
        #"{"device_code":"DEVICE-SECRET","user_code":"WDJB-MJHT","verification_uri":"https://e.example/device","expires_in":600,"interval":5}"#
      ),
      polls: [Result<HTTPResponse, TransportError>], aliases: [String: String] = [:]
    ) {
      let queue = Mutex(polls[...])
      transport = ScriptedTransport { request throws(TransportError) in
        if request.url == F.deviceURL { return device }
        guard let next = queue.withLock({ $0.popFirst() }) else {
          throw TransportError(.other, "no poll answer left")
        }
        return try next.get()
      }
      descriptor = F.descriptor(aliases: aliases)
    }

    var flow: DeviceAuthorizationFlow { flow(timeout: nil) }

    func flow(timeout: Double?) -> DeviceAuthorizationFlow {
      DeviceAuthorizationFlow(
        configuration: F.configuration(descriptor), scopes: ["openid", "offline_access"], transport: transport,
        clock: clock, timeout: timeout,
        sleep: { [self] seconds in
          sleeps.withLock { $0.append(seconds) }
          clock.advance(by: seconds)
        },
        present: { [self] _, left in presented.withLock { $0.append(left) } })
    }

    var polls: [ScriptedTransport.RecordedRequest] { transport.requests.filter { $0.url == F.tokenURL } }
    var slept: [Double] { sleeps.withLock { $0 } }
  }

  static func pending() -> Result<HTTPResponse, TransportError> { .success(T.oauthError("authorization_pending")) }

  @Test func pollsThroughPendingAndSlowDownToTokens() async throws {
    let harness = Harness(polls: [
      Self.pending(), .success(T.oauthError("slow_down")), Self.pending(),
      .success(T.tokens(access: "AT", refresh: "RT")),
    ])
    let response = try await harness.flow.run()
    #expect(response.accessToken == "AT")
    #expect(response.refreshToken == "RT")
    // slow_down adds 5 s to this and every later interval (RFC 8628 §3.5).
    #expect(harness.slept == [5, 5, 10, 10])
    #expect(harness.presented.withLock { $0 } == [600, 595, 590, 580])
    #expect(harness.polls.count == 4)
    for poll in harness.polls {
      #expect(poll[field: "grant_type"] == "urn:ietf:params:oauth:grant-type:device_code")
      #expect(poll[field: "device_code"] == "DEVICE-SECRET")
      #expect(poll[field: "client_id"] == F.clientID)
    }
    let start = try #require(harness.transport.requests.first)
    #expect(start.url == F.deviceURL)
    #expect(start[field: "scope"] == "openid offline_access")
  }

  @Test func slowDownsAccumulate() async throws {
    let harness = Harness(polls: [
      .success(T.oauthError("slow_down")), .success(T.oauthError("slow_down")), .success(T.tokens(access: "AT")),
    ])
    _ = try await harness.flow.run()
    #expect(harness.slept == [5, 10, 15])
  }

  @Test(arguments: [
    (T.oauthError("access_denied"), [String: String](), TokenKitError.Code.accessDenied),
    (T.oauthError("authorization_declined"), ["authorization_declined": "access_denied"], .accessDenied),
    (T.oauthError("expired_token"), [:], .signInTimedOut),
    (T.oauthError("code_expired"), ["code_expired": "expired_token"], .signInTimedOut),
    (T.oauthError("invalid_client", status: 401), [:], .serverError),
    (T.oauthError("invalid_grant"), [:], .signInFailed),
    (HTTPResponse(status: 502), [:], .serverError),
    (T.json(200, "{}"), [:], .serverError),
  ])
  func endsOnAnAnswerThatIsNotPending(
    answer: HTTPResponse, aliases: [String: String], code: TokenKitError.Code
  ) async throws {
    let harness = Harness(polls: [Self.pending(), .success(answer)], aliases: aliases)
    let error = await #expect(throws: TokenKitError.self) { try await harness.flow.run() }
    #expect(error?.code == code)
    #expect(harness.polls.count == 2)
    #expect(error.map { !$0.fullText.contains("DEVICE-SECRET") } == true)
  }

  @Test func anAliasOfPendingKeepsPolling() async throws {
    let harness = Harness(
      polls: [.success(T.oauthError("pending_approval")), .success(T.tokens(access: "AT"))],
      aliases: ["pending_approval": "authorization_pending"])
    #expect(try await harness.flow.run().accessToken == "AT")
    #expect(harness.slept == [5, 5])
  }

  @Test func aNetworkFailureWhilePollingIsANetworkFailure() async throws {
    let harness = Harness(polls: [Self.pending(), .failure(TransportError(.connectionFailed, "refused"))])
    let error = await #expect(throws: TokenKitError.self) { try await harness.flow.run() }
    #expect(error?.code == .networkFailure)
  }

  @Test func givesUpWhenTheCodeExpires() async throws {
    let harness = Harness(
      device: T.json(
        200,
        #"{"device_code":"DC","user_code":"U","verification_uri":"https://e.example/d","expires_in":12,"interval":5}"#),
      polls: Array(repeating: Self.pending(), count: 10))
    let error = await #expect(throws: TokenKitError.self) { try await harness.flow.run() }
    #expect(error?.code == .signInTimedOut)
    // Polls at 5 s and 10 s, then a last sleep of the 2 s left, a last poll, and no more.
    #expect(harness.slept == [5, 5, 2])
    #expect(harness.polls.count == 3)
    #expect(harness.presented.withLock { $0 } == [12, 7, 2])
  }

  /// The caller's limit, when shorter than the code's 600 s, ends the polling: a user who
  /// asked for 8 s is not left waiting for ten minutes, and is told which limit passed.
  @Test func givesUpAtTheCallersTimeoutWhenItIsShorter() async throws {
    let harness = Harness(polls: Array(repeating: Self.pending(), count: 10))
    let error = await #expect(throws: TokenKitError.self) { try await harness.flow(timeout: 8).run() }
    #expect(error?.code == .signInTimedOut)
    #expect(error?.message.contains("not approved within the 8 s") == true, "\(String(describing: error))")
    #expect(harness.slept == [5, 3])
    #expect(harness.polls.count == 2)
  }

  @Test func aLongerTimeoutLeavesTheCodesLifetime() async throws {
    let harness = Harness(
      device: T.json(
        200,
        #"{"device_code":"DC","user_code":"U","verification_uri":"https://e.example/d","expires_in":12,"interval":5}"#),
      polls: Array(repeating: Self.pending(), count: 10))
    let error = await #expect(throws: TokenKitError.self) { try await harness.flow(timeout: 300).run() }
    #expect(error?.message.contains("device code expired") == true)
    #expect(harness.slept == [5, 5, 2])
  }

  @Test func aZeroIntervalIsRaisedToOneSecond() async throws {
    let harness = Harness(
      device: T.json(
        200,
        #"{"device_code":"DC","user_code":"U","verification_uri":"https://e.example/d","expires_in":60,"interval":0}"#),
      polls: [Self.pending(), .success(T.tokens(access: "AT"))])
    _ = try await harness.flow.run()
    #expect(harness.slept == [1, 1])
  }

  @Test func aFailedStartIsReported() async throws {
    let harness = Harness(device: T.oauthError("invalid_client", status: 401), polls: [])
    let error = await #expect(throws: TokenKitError.self) { try await harness.flow.run() }
    #expect(error?.code == .serverError)
    #expect(error?.message.contains("start a device sign-in for corp") == true)
    #expect(harness.polls.isEmpty)
  }

  @Test func aCancelledSleepEndsTheFlow() async throws {
    let harness = Harness(polls: [Self.pending()])
    var flow = harness.flow
    flow.sleep = { _ in throw CancellationError() }
    await #expect(throws: CancellationError.self) { try await flow.run() }
    #expect(harness.polls.isEmpty)
  }
}
