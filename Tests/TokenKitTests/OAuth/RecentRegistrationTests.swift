import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit

/// A client registered moments ago that the server refuses (`invalid_client`), as a
/// provider with several workers does until each has loaded it: asked once more after a
/// pause, and if still refused, said to be news not yet spread, with a new sign-in as the
/// remedy. On a test clock and a recorded sleep, so that no test waits the pause.
@Suite(.timeLimit(.minutes(1))) struct RecentRegistrationTests {
  typealias F = OAuthFixtures
  typealias T = ScriptedTransport

  static let tokens = T.json(200, #"{"access_token":"AT","token_type":"Bearer","expires_in":3600}"#)
  static let unknownClient = T.json(401, #"{"error":"invalid_client","error_description":"unknown client"}"#)

  /// A scripted server whose token endpoint answers `answers` in order, and the sleeps the
  /// flow asked for.
  final class Server: Sendable {
    let clock = TestClock()
    let transport: ScriptedTransport
    let sleeps = Mutex<[Double]>([])

    init(token answers: [HTTPResponse], device: [HTTPResponse] = []) {
      let tokenQueue = Mutex(answers[...])
      let deviceQueue = Mutex(device[...])
      transport = ScriptedTransport { request throws(TransportError) in
        let next =
          request.url == F.deviceURL
          ? deviceQueue.withLock { $0.popFirst() } : tokenQueue.withLock { $0.popFirst() }
        guard let next else { throw TransportError(.other, "no answer left") }
        return next
      }
    }

    /// A client registered `age` seconds before now.
    func registration(age: Double) -> RecentRegistration {
      RecentRegistration(
        clientID: "new-client", registeredAt: clock.now.addingTimeInterval(-age), clock: clock,
        sleep: { [self] seconds in
          sleeps.withLock { $0.append(seconds) }
          clock.advance(by: seconds)
        })
    }

    func codeFlow(age: Double?) -> AuthorizationCodeFlow {
      let browser = ScriptedBrowser()
      var flow = AuthorizationCodeFlow(
        configuration: F.configuration(), scopes: ["openid"], receiver: browser.receiver, transport: transport,
        presentURL: browser.presentURL)
      flow.recentRegistration = age.map(registration(age:))
      return flow
    }

    var tokenRequests: Int { transport.requests.filter { $0.url == F.tokenURL }.count }
    var slept: [Double] { sleeps.withLock { $0 } }
  }

  @Test func aClientRegisteredMomentsAgoIsAskedOnceMoreAfterAPause() async throws {
    let server = Server(token: [Self.unknownClient, Self.tokens])
    let (response, _) = try await server.codeFlow(age: 2).run()
    #expect(response.accessToken == "AT")
    #expect(server.tokenRequests == 2)
    #expect(server.slept == [3])
  }

  @Test func aSecondRefusalSaysTheRegistrationIsSecondsOldAndToSignInAgain() async throws {
    let server = Server(token: [Self.unknownClient, Self.unknownClient, Self.tokens])
    let error = try await #require(throws: TokenKitError.self) { try await server.codeFlow(age: 2).run() }
    #expect(server.tokenRequests == 2)
    #expect(
      error.message
        == "the authorization server does not know client new-client yet (invalid_client: unknown client) while "
        + "trying to exchange the authorization code at http://127.0.0.1:9/token: tokenctl registered it there "
        + "5 s ago, and a server that runs several workers may take a while to tell them all")
    #expect(error.remedy == .signIn(type: "corp", device: false))
    #expect(error.recovery?.contains("client id and secret") == false)
  }

  /// A client registered long ago, or one the user configured, is refused for another
  /// reason: no second try, and the ordinary words.
  @Test(arguments: [3600.0, nil])
  func anOlderOrConfiguredClientIsNotAskedAgain(age: Double?) async throws {
    let server = Server(token: [Self.unknownClient, Self.tokens])
    let error = try await #require(throws: TokenKitError.self) { try await server.codeFlow(age: age).run() }
    #expect(server.tokenRequests == 1)
    #expect(server.slept.isEmpty)
    #expect(error.message.contains("does not accept this client"), "\(error.message)")
  }

  /// The device grant's first request is the first to name the client.
  @Test func aDeviceSignInsFirstRequestIsAskedOnceMoreToo() async throws {
    let device = T.json(
      200,
      #"{"device_code":"DC","user_code":"WDJB-MJHT","verification_uri":"https://e.example/device","expires_in":600,"interval":5}"#
    )
    let server = Server(token: [Self.tokens], device: [Self.unknownClient, device])
    var flow = DeviceAuthorizationFlow(
      configuration: F.configuration(), scopes: ["openid"], transport: server.transport, clock: server.clock,
      sleep: { [server] in server.clock.advance(by: $0) }, present: { _, _ in })
    flow.recentRegistration = server.registration(age: 1)
    let response = try await flow.run()
    #expect(response.accessToken == "AT")
    #expect(server.transport.requests.filter { $0.url == F.deviceURL }.count == 2)
    #expect(server.slept == [3])
  }
}
