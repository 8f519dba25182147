import AgentProtocol
import Foundation
import Testing
import TokenCtlCLI
import TokenKit
import TokenStoreTesting

@testable import AgentFrontEnd

/// The front end prints `tokenctl list` from the agent's answer (``AccountTable``) with a
/// copy of the full program's rules for the table: the same answer must print the same
/// bytes either way, or be left to the full program.
@Suite struct AccountTableTests {
  /// A quarter second past a whole one, so that the seconds left are truncated as the full
  /// program truncates them.
  static let now = Date(timeIntervalSince1970: 1_800_000_000.25)
  let backing = InMemoryTokenStore.Backing()

  func seed(
    _ type: String, _ name: String, group: String = "default", expiresIn: Double?, refresh: Bool = true,
    needsSignIn: Bool = false, serviceAccount: Bool = false
  ) throws {
    try InMemoryTokenStore(group: group, backing: backing).save(
      Account(
        type: type, id: "id-\(name)", name: name, group: group, scopes: ["openid", "email"],
        createdAt: Self.now.addingTimeInterval(-86_400.5), updatedAt: Self.now, issuer: "https://issuer.example",
        needsSignIn: needsSignIn, isServiceAccount: serviceAccount),
      tokens: TokenSet(
        accessToken: "ACCESS-\(name)", refreshToken: refresh ? "REFRESH" : nil,
        expiresAt: expiresIn.map { Self.now.addingTimeInterval($0) }))
  }

  /// What the agent answers for `group` (AgentService's `list`).
  func answer(_ group: String = "default") throws -> AgentMessage {
    AgentMessage(listings: try InMemoryTokenStore(group: group, backing: backing).list(AccountQuery(type: nil)))
  }

  static var nowNanoseconds: Int64 { Int64((now.timeIntervalSince1970 * 1000).rounded()) * 1_000_000 }

  @Test(arguments: [false, true])
  func theFrontEndsTableIsTheFullProgramsByteForByte(terminal: Bool) async throws {
    try seed("graph", "ada@contoso.com", expiresIn: 42 * 60 + 0.5)
    try seed("oidc", "grace", expiresIn: -10)
    try seed("oidc", "linus", expiresIn: -10, refresh: false)
    try seed("gitlab", "a-much-longer-account-name", expiresIn: 2 * 3600 + 30 * 60 + 12.5)
    try seed("github", "h", expiresIn: 3 * 86_400 + 5 * 3600)
    try seed("google", "soon", expiresIn: 30.9)
    try seed("graph", "exactly-a-day", expiresIn: 86_400)
    try seed("oidc", "forever", expiresIn: nil)
    try seed("oidc", "forever-alone", expiresIn: nil, refresh: false)
    try seed("graph", "rejected", expiresIn: 600, needsSignIn: true)
    try seed("graph", "daemon", expiresIn: 3600, refresh: false, serviceAccount: true)
    try seed("graph", "daemon-lapsed", expiresIn: -1, refresh: false, serviceAccount: true)
    let full = try await runInMemory(
      ["list"], backing: backing, clock: FixedClock(Self.now), environment: [:], terminal: terminal)
    #expect(full.status == 0)
    #expect(full.stderr.isEmpty)
    let table = try #require(AccountTable(try answer()))
    #expect(table.rows.count == 12)
    #expect(table.rendered(now: Self.nowNanoseconds, styled: terminal) == full.stdout)
  }

  @Test func anEmptyGroupIsSaidAsTheFullProgramSaysIt() async throws {
    let full = try await runInMemory(
      ["list"], backing: backing, clock: FixedClock(Self.now), environment: ["TOKENCTL_GROUP": "empty"])
    #expect(full.status == 0)
    #expect(full.stdout.isEmpty)
    #expect(full.stderr == AccountTable.noAccounts(group: "empty"))
    #expect(try #require(AccountTable(try answer("empty"))).rows.isEmpty)
  }

  /// Text the full program escapes or measures in other columns than bytes, warnings it
  /// prints, and records it would not read, are the full program's to print.
  @Test func whatTheFrontEndCannotBeSureOfIsLeftToTheFullProgram() throws {
    try seed("graph", "ada", expiresIn: 60)
    let plain = try answer()
    #expect(AccountTable(plain) != nil)
    for name in ["caf\u{E9}", "\u{5F20}\u{4F1F}", "evil\u{1B}[2J", "tab\there", "del\u{7F}"] {
      var message = plain
      message.fields = message.fields.map { $0.key == "name" ? .init("name", name) : $0 }
      #expect(AccountTable(message) == nil, "\(name.debugDescription)")
    }
    for extra in ["type-warning", "warning"] {
      var message = plain
      message.append(extra, "a type file was skipped")
      #expect(AccountTable(message) == nil, "\(extra)")
    }
    for (key, value) in [("expires", "1e9"), ("expires", "."), ("expires", "1."), ("created", "x"), ("updated", "")] {
      var message = plain
      message.fields = message.fields.map { $0.key == key ? .init(key, value) : $0 }
      #expect(AccountTable(message) == nil, "\(key)=\(value)")
    }
    for key in ["id", "name", "group", "scopes", "created", "updated", "needs-sign-in", "refreshable"] {
      var message = plain
      message.fields.removeAll { $0.key == key }
      #expect(AccountTable(message) == nil, "without \(key)")
    }
    #expect(AccountTable(AgentMessage(AgentMessage.Answer.error, [.init("code", "keyring-locked")])) == nil)
    #expect(AccountTable(AgentMessage(AgentMessage.Answer.accounts, [.init("id", "x")])) == nil)
  }

  @Test func durationsAreWordedAsTheCoreWordsThem() {
    for seconds in [-5, 0, 1, 59, 60, 61, 3599, 3600, 3660, 86_399, 86_400, 90_000, 3 * 86_400, 400 * 86_400] {
      #expect(AccountTable.duration(seconds: seconds) == DurationText.format(seconds: seconds), "\(seconds)")
    }
  }

  /// The records' dates, as `appendRecord` writes them, read to the nanosecond.
  @Test func datesAreReadAsSwiftPrintsThem() {
    for date in [786_931_200.0, 786_931_200.5, -12.25, 0.001, 1_000_000_000.123456] {
      let nanoseconds = AccountTable.nanoseconds("\(date)")
      #expect(nanoseconds.map { abs(Double($0) - date * 1e9) < 1000 } == true, "\(date)")
    }
    #expect(AccountTable.nanoseconds("12") == 12_000_000_000)
    #expect(AccountTable.nanoseconds("-0.5") == -500_000_000)
    #expect(AccountTable.nanoseconds("1.0000000019") == 1_000_000_001)
    #expect(AccountTable.nanoseconds("9000000000.5") == 9_000_000_000_500_000_000)
    for text in ["", "-", "+1.0", "1e3", "1.5.5", " 1.0", "inf", "nan", "9000000001.0", "12345678901.0"] {
      #expect(AccountTable.nanoseconds(text) == nil, "\(text)")
    }
  }
}
