import AgentWire
import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenAgent

/// The answer a connection's thread gives itself (``AgentService/answerAtOnce(_:handedOut:)``):
/// only a token that may be handed out as it is stored, by the same rule as the
/// pool's answer; everything else is left to the pool (nil), which refreshes, waits or words
/// the error. A token handed out here by mistake would be one the rule withholds.
@Suite struct AnswerAtOnceTests {
  let clock = TestClock()
  let backing = InMemoryTokenStore.Backing()
  let directory: TemporaryDirectory
  let environment: [String: String]

  init() throws {
    directory = try TemporaryDirectory()
    environment = ["HOME": directory.path("home"), "XDG_CONFIG_HOME": directory.path("config")]
  }

  func service(_ transport: ScriptedTransport) throws -> AgentService {
    var settings = AgentService.Settings()
    settings.isolatesRefreshes = false
    let backing = backing
    return AgentService(
      base: try OAuthFixtures.registry(), environment: environment, settings: settings, clock: clock,
      transport: transport, makeStore: { InMemoryTokenStore(group: $0, backing: backing) }, log: { _ in },
      sleep: { _ in try await Task.sleep(for: .seconds(3600)) })
  }

  func seed(expiresIn lifetime: Double, needsSignIn: Bool = false, issuer: String = OAuthFixtures.issuer) throws {
    let account = Account(
      type: "corp", id: "sub-1", name: "ada", group: Account.defaultGroup, createdAt: clock.now,
      updatedAt: clock.now, issuer: issuer, clientID: OAuthFixtures.clientID,
      needsSignIn: needsSignIn)
    let tokens = TokenSet(
      accessToken: "stored-access", refreshToken: "refresh-0", expiresAt: clock.now.addingTimeInterval(lifetime),
      issuedAt: clock.now.addingTimeInterval(-60))
    try InMemoryTokenStore(group: Account.defaultGroup, backing: backing).save(account, tokens: tokens)
  }

  /// A `token` request as the front end sends it, with this test's folders as its context.
  func request(_ fields: [AgentMessage.Field] = []) -> AgentMessage {
    var message = AgentMessage(
      AgentMessage.Request.token, [.init("group", Account.defaultGroup), .init("account", "ada")] + fields)
    for (name, value) in environment { message.append(AgentMessage.contextField(name), value) }
    return message
  }

  @Test func aValidTokenIsAnsweredAtOnceAsThePoolAnswersIt() async throws {
    let transport = ScriptedTransport { _ in HTTPResponse(status: 500) }
    let service = try service(transport)
    defer { service.stop() }
    try seed(expiresIn: 3600)
    let handed = Mutex<[String]>([])
    let atOnce = try #require(
      service.answerAtOnce(request()) { group, account in handed.withLock { $0.append("\(group) \(account.name)") } })
    #expect(atOnce["access-token"] == "stored-access")
    #expect(handed.withLock { $0 } == ["default ada"], "the audit is told, as on the pool")
    let pooled = await service.answer(request())
    #expect(atOnce.framed() == pooled.framed(), "byte for byte the pool's answer")
    #expect(transport.requestCount == 0)
  }

  /// An account signed in at another issuer than the one its type names now: its valid
  /// token is not handed out from memory, and the pool's answer refuses it without a
  /// request, as the command line does (the one hand-out rule checks every type's issuer).
  @Test func aValidTokenOfAnAccountWhoseIssuerMovedIsNotHandedOut() async throws {
    let transport = ScriptedTransport { _ in HTTPResponse(status: 500) }
    let service = try service(transport)
    defer { service.stop() }
    try seed(expiresIn: 3600, issuer: "https://elsewhere.example/")
    #expect(service.answerAtOnce(request()) { _, _ in } == nil)
    let pooled = await service.answer(request())
    #expect(pooled["access-token"] == nil)
    #expect(pooled.framed().count > 0 && !String(decoding: pooled.framed(), as: UTF8.self).contains("stored-access"))
    #expect(String(decoding: pooled.framed(), as: UTF8.self).contains("elsewhere.example"), "\(pooled)")
    #expect(transport.requestCount == 0)
  }

  @Test(
    arguments: [
      ("expired", 30.0, false, [AgentMessage.Field]()),
      ("needs sign-in", 3600, true, []),
      ("more validity than it has", 3600, false, [.init("min-valid", "7200")]),
      ("other scopes", 3600, false, [.init("scopes", "mail.read")]),
      ("no such account", 3600, false, [.init("account", "grace")]),
      ("a malformed min-valid", 3600, false, [.init("min-valid", "-1")]),
    ] as [(String, Double, Bool, [AgentMessage.Field])])
  func whatTheRuleWithholdsOrThePoolWordsIsLeftToThePool(
    _ label: String, expiresIn: Double, needsSignIn: Bool, fields: [AgentMessage.Field]
  ) throws {
    let service = try service(ScriptedTransport { _ in HTTPResponse(status: 500) })
    defer { service.stop() }
    try seed(expiresIn: expiresIn, needsSignIn: needsSignIn)
    var message = request()
    if let account = fields.first(where: { $0.key == "account" }) {
      message = AgentMessage(
        AgentMessage.Request.token,
        [.init("group", Account.defaultGroup), account]
          + environment.map { .init(AgentMessage.contextField($0.key), $0.value) })
    } else {
      for field in fields { message.append(field.key, field.value) }
    }
    let handed = Mutex(0)
    #expect(service.answerAtOnce(message) { _, _ in handed.withLock { $0 += 1 } } == nil, "\(label)")
    #expect(handed.withLock { $0 } == 0, "\(label): nothing handed out")
  }
}
