import Foundation
import TestSupport
import Testing

/// The D-Bus calls a `tokenctl token` or a git credential `get` makes on the direct path,
/// counted by `dbus-monitor` on a private bus: the read takes `SearchItems`, a
/// plain `OpenSession`, `GetSecrets` and the item's `GetAll`, and nothing else; no
/// libsecret proxy (`AddMatch`, `GetNameOwner`, `StartServiceByName` to the bus) and no
/// Diffie-Hellman session.
@Suite struct KeyringCallsTests {
  /// The algorithm libsecret opens its sessions with, which reads no longer use.
  static let diffieHellman = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

  @Test func aTokenReadMakesFourCallsInAPlainSession() async throws {
    try await onOwnThread { try Self.tokenRead() }
  }

  static func tokenRead() throws {
    try Self.expectFourCalls(type: "graph") { session, environment in
      let token = try TestProcess.run(
        TestProcess.tokenctl, ["token", "graph:ada@contoso.com"], environment: environment)
      #expect(token.status == 0 && token.stdout == "SECRET-TOKEN\n", "\(token.stderr)")
    }
  }

  /// git's `get` through git-credential-tokenctl, whose host a type of the test's own lists.
  @Test func aCredentialGetMakesFourCallsInAPlainSession() async throws {
    try await onOwnThread { try Self.credentialGet() }
  }

  static func credentialGet() throws {
    try Self.expectFourCalls(type: "calls") { session, environment in
      try UserTypeFile(
        id: "calls", displayName: "Calls", issuer: "http://127.0.0.1:9", clientID: "calls", gitHosts: ["calls.example"]
      ).write(configHome: session.directory.appendingPathComponent("config"))
      var environment = environment
      environment["XDG_CONFIG_HOME"] = session.directory.appendingPathComponent("config").path
      let get = try TestProcess.run(
        GitCredentialTests.helper, ["get"], environment: environment, stdin: "protocol=https\nhost=calls.example\n\n")
      #expect(get.status == 0 && get.stdout.contains("password=SECRET-TOKEN\n"), "\(get.stdout) \(get.stderr)")
    }
  }

  /// An account named by its id: the search by name finds nothing, which is GDBus's to
  /// look into (is a collection locked? is there a keyring?), from the search made
  /// without GIO rather than again (a provider that asks for a password on a search,
  /// KeePassXC, would ask twice); then the search by id reads it.
  @Test func aSearchThatFindsNothingIsNotMadeAgain() async throws {
    try await onOwnThread {
      let calls = try Self.monitoredCalls(type: "graph") { _, environment in
        let token = try TestProcess.run(TestProcess.tokenctl, ["token", "graph:oid-ada"], environment: environment)
        #expect(token.status == 0 && token.stdout == "SECRET-TOKEN\n", "\(token.stderr)")
      }
      let searches = calls.filter { $0.member == "SearchItems" }
      #expect(searches.count == 2, "\(calls.map(\.member))")
      // Every session opened without GIO is closed, the one of the search that found
      // nothing too.
      let sessions = calls.filter { $0.member == "OpenSession" && $0.arguments.contains(#"string "plain""#) }
      #expect(calls.filter { $0.member == "Close" }.count == sessions.count, "\(calls.map(\.member))")
      // The search that found nothing opened no session: there was nothing to read in one.
      #expect(sessions.count == 1, "\(calls.map(\.member))")
      #expect(searches.first?.arguments.contains(#"string "ada@contoso.com""#) != true)
    }
  }

  /// The session is asked for alone, once the search has answered: never queued behind
  /// another call of a client that has only just connected. gnome-keyring 42.1 aborts when
  /// it runs an `OpenSession` whose caller left the bus meanwhile (a reader killed in that
  /// window; see SecretServiceWireRead), and the `OpenSession` that went out with the
  /// search in the first write waited for the search to be done. Each call's position in
  /// `dbus-monitor`'s log, in the order the bus routed them, against its answer's.
  @Test func theSessionIsAskedForOnlyOnceTheSearchHasAnswered() async throws {
    try await onOwnThread {
      var routed: [Routed] = []
      _ = try Self.monitoredCalls(type: "graph") { session, environment in
        let token = try TestProcess.run(
          TestProcess.tokenctl, ["token", "graph:ada@contoso.com"], environment: environment)
        #expect(token.status == 0 && token.stdout == "SECRET-TOKEN\n", "\(token.stderr)")
        let log = session.directory.appendingPathComponent("monitor.txt").path
        try Self.waitFor(log) { text in
          routed = Self.routed(in: text)
          return routed.contains { $0.member == "Close" }
        }
      }
      let client = try #require(routed.first { $0.member == "OpenSession" }?.sender)
      let ours = routed.filter { $0.sender == client || $0.destination == client }
      let search = try #require(ours.firstIndex { $0.member == "SearchItems" })
      let opening = try #require(ours.firstIndex { $0.member == "OpenSession" })
      let answered = try #require(ours.firstIndex { $0.replySerial == ours[search].serial })
      #expect(answered < opening, "\(ours.map { $0.member ?? "reply to \($0.replySerial ?? "")" })")
      // And nothing else of the client's was on its way while the session was asked for.
      let openingAnswered = try #require(ours.firstIndex { $0.replySerial == ours[opening].serial })
      #expect(!ours[(opening + 1)..<openingAnswered].contains { $0.sender == client })
    }
  }

  /// A method call or return as `dbus-monitor` prints its header, in the order routed.
  struct Routed {
    let sender: String
    let destination: String
    let serial: String
    let replySerial: String?
    let member: String?
  }

  static func routed(in text: String) -> [Routed] {
    text.split(separator: "\n").compactMap { line -> Routed? in
      guard line.hasPrefix("method call ") || line.hasPrefix("method return ") else { return nil }
      func field(_ name: String) -> String? {
        guard let start = line.range(of: " \(name)=") else { return nil }
        return String(line[start.upperBound...].prefix { $0 != " " && $0 != ";" })
      }
      return Routed(
        sender: field("sender") ?? "", destination: field("destination") ?? "", serial: field("serial") ?? "",
        replySerial: field("reply_serial"), member: field("member"))
    }
  }

  /// Runs `read` (a client that reads the token of the account `ada@contoso.com` of `type`,
  /// seeded first) under `dbus-monitor`, and checks the calls that client made.
  static func expectFourCalls(type: String, _ read: (PrivateSession, [String: String]) throws -> Void) throws {
    let calls = try monitoredCalls(type: type, read)
    // One connection.
    let toBus = calls.filter { $0.destination == "org.freedesktop.DBus" }
    let toService = calls.filter { $0.destination != "org.freedesktop.DBus" }
    #expect(toBus.map(\.member) == ["Hello"])
    #expect(toService.count <= 5, "\(toService.map(\.member))")
    #expect(
      Set(toService.map(\.member)).isSubset(of: ["SearchItems", "OpenSession", "GetSecrets", "GetAll", "Close"]))
    let sessions = toService.filter { $0.member == "OpenSession" }
    #expect(sessions.count == 1 && sessions.allSatisfy { $0.arguments.contains(#"string "plain""#) })
    // The session is closed, in the same write as the reads, not left to the disconnect
    // (SecretServiceWireRead.close).
    #expect(toService.last?.member == "Close", "\(toService.map(\.member))")
    #expect(!calls.contains { $0.arguments.contains(diffieHellman) })
  }

  /// Runs `read` (as above) under `dbus-monitor`, and returns the calls the client made.
  static func monitoredCalls(type: String, _ read: (PrivateSession, [String: String]) throws -> Void) throws -> [Call] {
    let session = try PrivateSession(.unlockedKeyring, ownAgent: false)
    defer { session.stop() }
    let item = KeyringCommandTests.seededItem.map { $0 == "graph" ? type : $0 }
    let stored = try session.run(
      "secret-tool", item, stdin: #"{"version":1,"access_token":"SECRET-TOKEN","token_type":"Bearer"}"#)
    try #require(stored.status == 0, "\(stored.stderr)")
    var environment = session.environment
    environment["TOKENCTL_AGENT"] = "0"

    let log = session.directory.appendingPathComponent("monitor.txt").path
    let monitor = try TestProcess("dbus-monitor", ["--session"], environment: environment, stdout: log)
    defer { monitor.terminate() }
    // dbus-monitor hears its own NameLost once it has become a monitor.
    try Self.waitFor(log) { $0.contains("member=NameLost") }

    try read(session, environment)
    // Each of the client's connections begins with a Hello, after the monitor's own; the
    // bus tells a connection that it lost its unique name when it closes. Every one that
    // said Hello has closed once the log has stayed so for a while (the client has exited).
    var clients: Set<String> = []
    var settled: (text: String, since: Date)?
    try Self.waitFor(log) { text in
      clients = Set(Self.calls(in: text).filter { $0.member == "Hello" }.map(\.sender))
      let closed = clients.allSatisfy { client in
        text.split(separator: "\n").contains {
          $0.contains("destination=\(client) ") && $0.hasSuffix("member=NameLost")
        }
      }
      guard !clients.isEmpty, closed else { return false }
      if settled?.text != text { settled = (text, Date()) }
      return Date().timeIntervalSince(settled!.since) > Self.quiet
    }
    return Self.calls(in: try String(contentsOfFile: log, encoding: .utf8)).filter { clients.contains($0.sender) }
  }

  /// How long the monitor's log stays the same before the client's calls count as all
  /// there: a connection the client opened later may reach the monitor after an earlier
  /// one's close.
  static let quiet: TimeInterval = 0.3

  /// A method call as `dbus-monitor` prints it: a header line, then its arguments indented.
  struct Call {
    let sender: String
    let destination: String
    let member: String
    var arguments = ""
  }

  static func calls(in text: String) -> [Call] {
    var calls: [Call] = []
    var inCall = false
    for line in text.split(separator: "\n") {
      if line.hasPrefix(" ") {
        if inCall { calls[calls.count - 1].arguments += line + "\n" }
        continue
      }
      inCall = line.hasPrefix("method call ")
      guard inCall else { continue }
      func field(_ name: String) -> String {
        guard let start = line.range(of: " \(name)=") else { return "" }
        return String(line[start.upperBound...].prefix { $0 != " " && $0 != ";" })
      }
      calls.append(Call(sender: field("sender"), destination: field("destination"), member: field("member")))
    }
    return calls
  }

  static func waitFor(_ path: String, _ ready: (String) -> Bool) throws {
    let deadline = Date().addingTimeInterval(10)
    while !ready((try? String(contentsOfFile: path, encoding: .utf8)) ?? "") {
      guard Date() < deadline else { throw TestFailure("dbus-monitor did not show what the test waits for") }
      usleep(20_000)
    }
  }
}
