import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit

/// `tokenctl cargo-credential` with a real cargo fetching a crate from a sparse registry
/// that requires authentication (`Tests/Support/cargo-registry-server.py`), every request
/// checked at the real authorization server.
@Suite(.serialized) struct CargoCredentialTests {
  /// A cargo that speaks the credential provider protocol (1.74 or later): rustup's, when
  /// the machine has it (Debian 12's is 0.66), as `make test` may find it on a developer's
  /// machine; nil, and the tests that need it are skipped, when there is none.
  static let cargoTool: (path: String, environment: [String: String])? = {
    // The user's own home, from the password database: the tests run with a HOME of their own.
    let home = getpwuid(getuid()).flatMap { $0.pointee.pw_dir.map { String(cString: $0) } } ?? "/root"
    let variables = ProcessInfo.processInfo.environment
    let rustupHome = variables["RUSTUP_HOME"] ?? home + "/.rustup"
    let candidates = [
      variables["TOKENCTL_TEST_CARGO"], (variables["CARGO_HOME"] ?? home + "/.cargo") + "/bin/cargo", "/usr/bin/cargo",
    ]
    for path in candidates {
      guard let path, FileManager.default.isExecutableFile(atPath: path),
        let version = try? TestProcess.run(path, ["--version"], environment: ["RUSTUP_HOME": rustupHome]),
        version.status == 0
      else { continue }
      // "cargo 1.95.0 (f2d3ce0bd 2026-03-21)"
      let minor = version.stdout.split(separator: " ").dropFirst().first?.split(separator: ".").dropFirst().first
      guard let minor = minor.flatMap({ Int($0) }), minor >= 74 else { continue }
      return (path, ["RUSTUP_HOME": rustupHome])
    }
    return nil
  }()

  let fixture: ToolHelperFixture

  init() async throws {
    fixture = try await ToolHelperFixture.started(registry: "Tests/Support/cargo-registry-server.py")
  }

  var cargoHome: URL { fixture.directory.url.appendingPathComponent("cargo-home") }
  var project: URL { fixture.directory.url.appendingPathComponent("app") }

  /// Cargo's home with the registry, whose credential provider is tokenctl, and a project
  /// that depends on the registry's crate.
  func writeProject() throws {
    try FileManager.default.createDirectory(at: cargoHome, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
      at: project.appendingPathComponent("src"), withIntermediateDirectories: true)
    try """
    [registries.tokentest]
    index = "sparse+\(fixture.registry)/index/"
    credential-provider = "\(TestProcess.tokenctl)"
    """.write(to: cargoHome.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
    try """
    [package]
    name = "app"
    version = "0.1.0"
    edition = "2021"

    [dependencies]
    hello = { version = "0.1", registry = "tokentest" }
    """.write(to: project.appendingPathComponent("Cargo.toml"), atomically: true, encoding: .utf8)
    try "fn main() {}\n".write(to: project.appendingPathComponent("src/main.rs"), atomically: true, encoding: .utf8)
  }

  func cargo(_ arguments: [String]) async throws -> ProcessResult {
    let cargo = try #require(Self.cargoTool)
    var environment = fixture.environment.merging(cargo.environment) { $1 }
    environment["CARGO_HOME"] = cargoHome.path
    environment["CARGO_TERM_COLOR"] = "never"
    return try await TestProcess.run(
      cargo.path, arguments + ["--manifest-path", project.appendingPathComponent("Cargo.toml").path],
      environment: environment)
  }

  /// Runs the provider as cargo does, with `requests` as its JSON lines.
  func provider(_ requests: [String]) async throws -> ProcessResult {
    try await TestProcess.run(
      TestProcess.tokenctl, ["--cargo-plugin"], environment: fixture.environment,
      stdin: requests.map { $0 + "\n" }.joined())
  }

  func request(_ kind: String, index: String) -> String {
    #"{"v":1,"registry":{"index-url":"\#(index)","name":"tokentest"},"kind":"\#(kind)","operation":"read","args":[]}"#
  }

  @Test(.enabled(if: cargoTool != nil, "no cargo 1.74 or later (rustup's) on this machine"))
  func cargoFetchesFromARegistryThatRequiresAuthenticationWithTheAccountsToken() async throws {
    defer { fixture.cleanUp() }
    let account = try await fixture.signIn(user: "ada")
    try writeProject()
    let fetch = try await cargo(["fetch"])
    #expect(fetch.status == 0, "\(fetch.stderr)\n\(fixture.requests())")
    let token = try fixture.token(account)
    #expect(try await fixture.server.introspect(token).active)
    #expect(fixture.tokensSent() == [fixture.fingerprint(token)], "cargo sent the account's token and no other")
    let paths = Set(fixture.requests().filter { ($0["status"] as? Int) == 200 }.compactMap { $0["path"] as? String })
    #expect(paths == ["/index/config.json", "/index/he/ll/hello", "/api/v1/crates/hello/0.1.0/download"])
    #expect(!fetch.stderr.contains(token))
  }

  @Test func theProtocolAnswersGetWithExpiryAndNothingForARegistryNotOurs() async throws {
    defer { fixture.cleanUp() }
    let account = try await fixture.signIn(user: "ada")
    try fixture.expire(account)
    let old = try fixture.token(account)
    let result = try await provider([
      request("get", index: "sparse+\(fixture.registry)/index/"),
      request("get", index: "sparse+https://cargo.example.org/index/"),
      request("login", index: "sparse+\(fixture.registry)/index/"),
      request("logout", index: "sparse+\(fixture.registry)/index/"),
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    try #require(lines.count == 5, "\(result.stdout)")
    #expect(lines[0] == #"{"v":[1]}"#)
    // The expired token was refreshed first, and its expiry lets cargo cache it.
    let token = try fixture.token(account)
    #expect(token != old)
    let get = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: [String: Any]])
    #expect(get["Ok"]?["token"] as? String == "Bearer \(token)")
    #expect(get["Ok"]?["cache"] as? String == "expires")
    let expiration = try #require(get["Ok"]?["expiration"] as? Int)
    #expect(Double(expiration) > Date().timeIntervalSince1970 + 60)
    #expect(lines[2] == #"{"Err":{"kind":"url-not-supported"}}"#)
    #expect(lines[3].contains(#""kind":"other""#) && lines[3].contains("'tokenctl login'"))
    #expect(lines[4].contains(#""kind":"other""#) && lines[4].contains("'tokenctl revoke'"))
    #expect(!result.stderr.contains(token))
  }

  /// The front end, installed as `tokenctl`, holds cargo's conversation with the agent
  /// alone (`make bench`, row 16): with no full program beside it, it answers every
  /// `get` the agent answers, byte for byte as the full program, asking once each.
  @Test func theFrontEndAloneAnswersGetsThroughTheAgent() async throws {
    defer { fixture.cleanUp() }
    _ = try await fixture.signIn(user: "ada")
    let socket = fixture.directory.path("agent/agent.sock")
    let agent = try await TestAgent.start(
      environment: fixture.environment, socket: socket, log: fixture.directory.path("agent.log"))
    let client = TestAgent.clientEnvironment(fixture.environment, socket: socket)
    let (alone, folder) = try ToolHelperFixture.frontEndAlone(named: "tokenctl")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let requests = [
      request("get", index: "sparse+\(fixture.registry)/index/"),
      request("get", index: "sparse+https://cargo.example.org/index/"),
    ].map { $0 + "\n" }.joined()
    let full = try await TestProcess.run(
      TestProcess.tokenctl, ["--cargo-plugin"], environment: client.merging(["TOKENCTL_AGENT": "0"]) { $1 },
      stdin: requests)
    #expect(full.status == 0, "\(full.stderr)")
    let before = try await agent.requests()
    let answer = try await TestProcess.run(alone, ["--cargo-plugin"], environment: client, stdin: requests)
    #expect(answer.status == 0, "\(answer.stderr)")
    #expect(answer.stdout == full.stdout && answer.stderr.isEmpty, "\(answer.stdout)\n\(full.stdout)")
    #expect(answer.stdout.split(separator: "\n").count == 3 && answer.stdout.contains("Bearer "))
    // Its two requests and the status request that reads the counter.
    #expect(try await agent.requests() == before + 3)

    // A request the agent leaves to the command line (login): the front end hands it, and
    // what follows, to the full program, which answers them as it would have.
    let handed =
      requests
      + [request("login", index: "sparse+\(fixture.registry)/index/"), request("get", index: "x")]
      .map { $0 + "\n" }.joined()
    let fullHanded = try await TestProcess.run(
      TestProcess.tokenctl, ["--cargo-plugin"], environment: client.merging(["TOKENCTL_AGENT": "0"]) { $1 },
      stdin: handed)
    let beforeHanded = try await agent.requests()
    let answerHanded = try await TestProcess.run(
      TestProcess.frontEnd, ["--cargo-plugin"], environment: client, stdin: handed)
    #expect(answerHanded.status == 0, "\(answerHanded.stderr)")
    #expect(answerHanded.stdout == fullHanded.stdout, "\(answerHanded.stdout)\n\(fullHanded.stdout)")
    #expect(answerHanded.stdout.split(separator: "\n").count == 5 && answerHanded.stdout.contains("'tokenctl login'"))
    // Two gets and the login, then nothing more of the agent: and the status request.
    #expect(try await agent.requests() == beforeHanded + 4)
    #expect(await agent.stop() == 0)
  }

  @Test func withoutAnAccountGetIsNotFoundAndSaysWhichLoginToRun() async throws {
    let result = try await provider([request("get", index: "sparse+\(fixture.registry)/index/")])
    #expect(result.stdout == "{\"v\":[1]}\n{\"Err\":{\"kind\":\"not-found\"}}\n")
    #expect(
      result.stderr.contains(
        "tokenctl cargo-credential: no account for \(fixture.host): run 'tokenctl login gitlocal'"),
      "\(result.stderr)")
  }
}
