import Foundation
import NativeAppSupport
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenCtlCLI

/// Every sign-in flow, refresh and revocation against a real authorization server
/// (django-oauth-toolkit on 127.0.0.1) through the real libcurl transport, loopback
/// listener and browser launcher; the "user" is `Tests/Support/scripted-browser.sh`.
/// The store is in memory here; the keyring is covered by the binary tests.
@Suite(.serialized) struct SignInIntegrationTests {
  let backing = InMemoryTokenStore.Backing()
  let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-signin-\(UUID().uuidString)")

  init() throws {
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
  }

  func registry(_ server: AuthServer) throws -> AccountTypeRegistry {
    var registry = AccountTypeRegistry()
    let issuer = try #require(URL(string: server.issuer))
    let scopes = ["openid", "profile", "email"]
    try registry.register(
      EndpointDescriptor(
        id: "local", displayName: "Test server", endpoints: .discovered(issuer: issuer), defaultScopes: scopes,
        clientID: server.nativeClientID, redirect: .loopback(host: "127.0.0.1", path: "/callback")),
      source: "test")
    try registry.register(
      EndpointDescriptor(
        id: "local-device", displayName: "Test server, device grant", endpoints: .discovered(issuer: issuer),
        defaultScopes: scopes, clientID: server.deviceClientID), source: "test")
    try registry.register(
      EndpointDescriptor(
        id: "local-service", displayName: "Test server, service client", endpoints: .discovered(issuer: issuer),
        defaultScopes: ["read"], clientID: server.serviceClientID, clientSecret: server.serviceClientSecret,
        tokenEndpointAuthentication: .clientSecretBasic), source: "test")
    return registry
  }

  struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  /// Runs tokenctl in-process with the browser and the user scripted by `browser`.
  func tokenctl(
    _ arguments: [String], server: AuthServer, browser: [String: String] = [:],
    readLine: @escaping @Sendable () -> String? = { nil },
    sleep: (@Sendable (Double) async throws -> Void)? = nil, output: CapturedOutput = CapturedOutput()
  ) async throws -> Run {
    var environment = server.browserEnvironment(scratch: scratch)
    environment.merge(browser) { $1 }
    let backing = backing
    let context = CLIContext(
      registry: try registry(server), makeStore: { InMemoryTokenStore(group: $0, backing: backing) },
      clock: SystemClock(), environment: environment, output: output, readLine: readLine,
      sleep: sleep ?? { try await Task.sleep(for: .seconds($0)) })
    let status = await TokenCtl.main(arguments: arguments, context: context)
    return Run(status: status, stdout: output.stdout, stderr: output.stderr)
  }

  var store: InMemoryTokenStore { InMemoryTokenStore(group: "default", backing: backing) }

  func storedTokens(_ type: String = "local") throws -> StoredAccount {
    let listing = try #require(try store.list(AccountQuery(type: type)).first)
    return try #require(try store.load(listing.account.key))
  }

  /// Sends a refresh token straight to the server, as an attacker holding an old one would.
  func refreshDirectly(_ refreshToken: String, server: AuthServer) async throws -> Int {
    let request = TokenRequest(
      endpoint: try #require(URL(string: server.baseURL + "/o/token/")), grant: .refreshToken(refreshToken),
      client: ClientIdentity(id: server.nativeClientID))
    return try await CurlHTTPTransport().send(request.httpRequest).status
  }

  /// The text of the page the scripted browser ended on, which it writes a moment after
  /// the listener answered.
  func pageText(_ file: URL) async throws -> String {
    let deadline = Date().addingTimeInterval(30)
    while !FileManager.default.fileExists(atPath: file.path), Date() < deadline {
      try await Task.sleep(for: .milliseconds(50))
    }
    return try String(contentsOf: file, encoding: .utf8)
  }

  /// The page the browser ends on comes after the code exchange: it names the account
  /// signed in, or says what failed and the command to run next, as the terminal does.
  @Test func theBrowsersLastPageNamesTheAccountOrWhatFailedAndWhatToRun() async throws {
    let server = try await AuthServer.shared
    let signedInPage = scratch.appendingPathComponent("signed-in.txt")
    let signedIn = try await tokenctl(
      ["login", "local", "--browser"], server: server, browser: ["SCRIPTED_BROWSER_PAGE": signedInPage.path])
    #expect(signedIn.status == 0, "\(signedIn.stderr)")
    let signedInText = try await pageText(signedInPage)
    #expect(signedInText.contains("Signed in as ada at local."), "\(signedInText)")
    #expect(signedInText.contains("You can close this window and return to the terminal."), "\(signedInText)")

    let deniedPage = scratch.appendingPathComponent("denied.txt")
    let denied = try await tokenctl(
      ["login", "local", "--browser"], server: server,
      browser: ["SCRIPTED_BROWSER_ACTION": "deny", "SCRIPTED_BROWSER_PAGE": deniedPage.path])
    #expect(denied.status == 12, "\(denied.stderr)")
    let deniedText = try await pageText(deniedPage)
    let hint = try #require(
      denied.stderr.split(separator: "\n").first { $0.hasPrefix("hint: ") }?.dropFirst("hint: ".count),
      "the terminal's hint: \(denied.stderr)")
    #expect(deniedText.contains("tokenctl could not sign you in"), "\(deniedText)")
    #expect(deniedText.contains(String(hint)), "the page gives the terminal's hint: \(deniedText)")
  }

  @Test func browserSignInStoresTheAccountAndSigningInAgainUpdatesIt() async throws {
    let server = try await AuthServer.shared
    let first = try await tokenctl(["login", "local", "--browser"], server: server)
    #expect(first.status == 0, "\(first.stderr)")
    #expect(first.stdout.contains("Signed in to local as ada"))
    #expect(first.stderr.contains("Opened your browser with"))
    let ada = try storedTokens()
    #expect(ada.account.issuer == server.issuer)
    #expect(ada.tokens.refreshToken != nil && ada.tokens.idToken != nil)

    let again = try await tokenctl(["login", "local"], server: server)
    #expect(again.status == 0, "\(again.stderr)")
    let accounts = try store.list(AccountQuery(type: "local"))
    #expect(accounts.count == 1)
    #expect(accounts.first?.account.createdAt == ada.account.createdAt)
    #expect(try storedTokens().tokens.accessToken != ada.tokens.accessToken)

    let grace = try await tokenctl(["login", "local"], server: server, browser: ["SCRIPTED_BROWSER_USER": "grace"])
    #expect(grace.status == 0, "\(grace.stderr)")
    #expect(Set(try store.list(AccountQuery(type: "local")).map(\.account.name)) == ["ada", "grace"])
  }

  /// No display, but BROWSER names a browser: the sign-in
  /// uses it, as xdg-open would, instead of the device grant.
  @Test func withoutADisplayBrowserIsStillTheBrowser() async throws {
    let server = try await AuthServer.shared
    let run = try await tokenctl(
      ["login", "local"], server: server, browser: ["DISPLAY": "", "WAYLAND_DISPLAY": ""],
      sleep: { _ in throw TestFailure("the device grant polled: BROWSER was ignored") })
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stderr.contains("Opened your browser with"), "\(run.stderr)")
  }

  @Test func anExpiredTokenIsRefreshedAndTheRotatedTokenStored() async throws {
    let server = try await AuthServer.shared
    #expect(try await tokenctl(["login", "local"], server: server).status == 0)
    var stored = try storedTokens()
    let oldRefresh = try #require(stored.tokens.refreshToken)
    stored.tokens.expiresAt = Date().addingTimeInterval(-60)
    try store.save(stored.account, tokens: stored.tokens)

    let token = try await tokenctl(["token", "local:ada"], server: server)
    #expect(token.status == 0, "\(token.stderr)")
    let refreshed = try storedTokens()
    #expect(token.stdout == refreshed.tokens.accessToken + "\n")
    #expect(token.stdout != stored.tokens.accessToken + "\n")
    #expect(refreshed.tokens.refreshToken != oldRefresh, "the server rotates refresh tokens")

    // Reusing the rotated-out token is theft to the server: it refuses, and revokes the
    // grant, so our next refresh is refused too and the account needs a new sign-in.
    #expect(try await refreshDirectly(oldRefresh, server: server) == 400)
    let after = try await tokenctl(["refresh", "local:ada"], server: server)
    #expect(after.status == 5, "\(after.stderr)")
    #expect(after.stderr.contains("invalid_grant") && after.stderr.contains("tokenctl login local"))
    let kept = try storedTokens()
    #expect(kept.account.needsSignIn)
    #expect(kept.tokens == refreshed.tokens, "the tokens are kept for the user to see")
    let list = try await tokenctl(["list"], server: server)
    #expect(list.stdout.contains("needs sign-in"))
  }

  @Test func revokingAtTheServerEndsTheGrant() async throws {
    let server = try await AuthServer.shared
    #expect(try await tokenctl(["login", "local"], server: server).status == 0)
    let refreshToken = try #require(try storedTokens().tokens.refreshToken)
    let revoke = try await tokenctl(["revoke", "local:ada"], server: server)
    #expect(revoke.status == 0, "\(revoke.stderr)")
    #expect(revoke.stderr.contains("Revoked the tokens of local:ada at the server"))
    #expect(try store.list(.all).isEmpty)
    #expect(try await refreshDirectly(refreshToken, server: server) == 400)
  }

  @Test func deniedConsentEndsWithAClearErrorAndNoAccount() async throws {
    let server = try await AuthServer.shared
    let run = try await tokenctl(["login", "local"], server: server, browser: ["SCRIPTED_BROWSER_ACTION": "deny"])
    #expect(run.status == 12, "\(run.stderr)")
    #expect(run.stderr.contains("access_denied"))
    #expect(try store.list(.all).isEmpty)
  }

  @Test func aForgedCallbackWithTheWrongStateIsRefusedAndTheSignInGoesOn() async throws {
    let server = try await AuthServer.shared
    let run = try await tokenctl(
      ["login", "local"], server: server, browser: ["SCRIPTED_BROWSER_ACTION": "forge-state"])
    #expect(run.status == 0, "\(run.stderr)")
    let log = try String(contentsOf: scratch.appendingPathComponent("browser.log"), encoding: .utf8)
    #expect(log.contains("400"), "the forged callback got 400: \(log)")
    #expect(try store.list(.all).count == 1)
  }

  /// Another local process that read the authorization URL (the browser's argv shows
  /// it, state included) answers the listener first, with a code for its own account.
  /// The state matches, but the code was issued for the attacker's PKCE challenge, so
  /// the exchange with our verifier fails: nobody is signed in as the attacker.
  @Test func anAttackersCodeDeliveredWithTheRightStateCannotSignInAsTheAttacker() async throws {
    let server = try await AuthServer.shared
    let run = try await tokenctl(
      ["login", "local"], server: server, browser: ["SCRIPTED_BROWSER_ACTION": "inject-foreign-code"])
    // The browser runs on by itself and logs the listener's answer after tokenctl may have
    // ended: wait for its line.
    var log = ""
    for _ in 0..<200 {
      log = (try? String(contentsOf: scratch.appendingPathComponent("browser.log"), encoding: .utf8)) ?? ""
      if log.contains("injected callback status") { break }
      try await Task.sleep(for: .milliseconds(50))
    }
    #expect(log.contains("signing in as grace") && log.contains("injected callback status"), "\(log)")
    #expect(run.status == 12, "\(run.stderr)")
    #expect(run.stderr.contains("invalid_grant"), "\(run.stderr)")
    #expect(try store.list(.all).isEmpty, "no account, least of all grace's")
    HardeningSummary.record("listener", "foreign code with the right state", run.status == 12 ? "pass" : "fail")
  }

  @Test func noAnswerFromTheBrowserTimesOut() async throws {
    let server = try await AuthServer.shared
    let run = try await tokenctl(
      ["login", "local", "--timeout", "2"], server: server, browser: ["SCRIPTED_BROWSER_ACTION": "ignore"])
    #expect(run.status == 13, "\(run.stderr)")
    #expect(run.stderr.contains("--paste") || run.stderr.contains("--device"))
  }

  @Test func pastingTheRedirectedAddressSignsIn() async throws {
    let server = try await AuthServer.shared
    let pasted = scratch.appendingPathComponent("pasted")
    let output = CapturedOutput()
    let environment = ProcessInfo.processInfo.environment.merging([
      "SCRIPTED_BROWSER_SERVER_JSON": server.serverJSON, "SCRIPTED_BROWSER_ACTION": "print",
      "SCRIPTED_BROWSER_OUTPUT": pasted.path, "SCRIPTED_BROWSER_FOREGROUND": "1",
    ]) { $1 }
    let run = try await tokenctl(
      ["login", "local", "--paste"], server: server,
      readLine: {
        // The user opens the printed address in a browser elsewhere, signs in, and copies
        // the address the browser ended on.
        let url = output.stderr.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http") }.map(String.init)
        guard let url,
          (try? TestProcess.run(AuthServer.path("Tests/Support/scripted-browser.sh"), [url], environment: environment))?
            .status == 0
        else { return nil }
        return (try? String(contentsOf: pasted, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
      }, output: output)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stderr.contains("Open this address in a browser"))
    #expect(try store.list(.all).count == 1)
  }

  @Test(arguments: ["allow", "deny"])
  func theDeviceGrantFollowsTheUsersAnswerOnAnotherDevice(answer: String) async throws {
    let server = try await AuthServer.shared
    let output = CapturedOutput()
    let answered = SendableFlag()
    let environment = ProcessInfo.processInfo.environment.merging([
      "SCRIPTED_BROWSER_SERVER_JSON": server.serverJSON, "SCRIPTED_BROWSER_ACTION": answer,
    ]) { $1 }
    let run = try await tokenctl(
      ["login", "local-device", "--device", "--scope", "openid"], server: server,
      sleep: { seconds in
        // The first wait is when a user reads the code and answers on another device.
        if !answered.testAndSet() {
          let words = output.stderr.split(whereSeparator: \.isWhitespace).map(String.init)
          let uri = words.first { $0.hasPrefix("http") } ?? ""
          let code = words.firstIndex(of: "code").map { words[$0 + 1] } ?? ""
          let approval = try await TestProcess.run(
            AuthServer.path("Tests/Support/scripted-browser.sh"), ["--device", uri, code], environment: environment)
          #expect(approval.status == 0, "\(approval.stderr)")
        }
        try await Task.sleep(for: .milliseconds(Int(min(seconds, 1) * 1000)))
      }, output: output)
    #expect(output.stderr.contains("To sign in, open"))
    if answer == "allow" {
      #expect(run.status == 0, "\(run.stderr)")
      #expect(try store.list(AccountQuery(type: "local-device")).count == 1)
    } else {
      #expect(run.status == 12, "\(run.stderr)")
      #expect(try store.list(.all).isEmpty)
      // The way out is this very command line, its options kept.
      #expect(
        run.stderr.contains(
          "hint: Run `tokenctl login local-device --scope openid --device` again and approve the request."),
        "\(run.stderr)")
    }
  }

  /// A client without the device grant: the server shows a
  /// code, the user approves, and the token request is refused with `unauthorized_client`.
  /// The hint is this command line with `--browser` (or `--paste`), and it runs as shown.
  @Test func aClientWithoutTheDeviceGrantIsToldTheWayOutThatRuns() async throws {
    let server = try await AuthServer.shared
    let output = CapturedOutput()
    let answered = SendableFlag()
    let environment = ProcessInfo.processInfo.environment.merging([
      "SCRIPTED_BROWSER_SERVER_JSON": server.serverJSON, "SCRIPTED_BROWSER_ACTION": "allow",
    ]) { $1 }
    let run = try await tokenctl(
      ["login", "local", "--device", "--scope", "openid", "--scope", "profile"], server: server,
      sleep: { seconds in
        if !answered.testAndSet() {
          let words = output.stderr.split(whereSeparator: \.isWhitespace).map(String.init)
          let uri = words.first { $0.hasPrefix("http") } ?? ""
          let code = words.firstIndex(of: "code").map { words[$0 + 1] } ?? ""
          _ = try await TestProcess.run(
            AuthServer.path("Tests/Support/scripted-browser.sh"), ["--device", uri, code], environment: environment)
        }
        try await Task.sleep(for: .milliseconds(Int(min(seconds, 1) * 1000)))
      }, output: output)
    #expect(run.status == 12, "\(run.stderr)")
    #expect(run.stderr.contains("unauthorized_client"), "\(run.stderr)")
    let hint = try #require(run.stderr.split(separator: "\n").first { $0.hasPrefix("hint: ") }, "\(run.stderr)")
    #expect(
      hint
        == "hint: Run `tokenctl login local --scope openid --scope profile --browser`, or "
        + "`tokenctl login local --scope openid --scope profile --paste` over SSH.")
    // As printed, through a shell.
    let command = hint.split(separator: "`")[1]
    let shell = try await TestProcess.run(
      "/bin/sh", ["-c", "tokenctl() { printf '%s\\n' \"$@\"; }; \(command)"], environment: [:])
    let again = try await tokenctl(shell.stdout.split(separator: "\n").map(String.init), server: server)
    #expect(again.status == 0, "\(again.stderr)")
    #expect(try store.list(AccountQuery(type: "local")).count == 1)
  }

  /// Results on a terminal, messages into a file (`tokenctl login --device 2>log`): the
  /// progress line is not rewritten in place, so the file gets no control codes.
  @Test func theDeviceProgressWritesNoControlCodesIntoARedirectedStandardError() async throws {
    let server = try await AuthServer.shared
    let output = CapturedOutput(isTerminal: true, errorIsTerminal: false)
    let polls = SendableFlag()
    let run = try await tokenctl(
      ["login", "local-device", "--device"], server: server,
      sleep: { _ in
        // The second wait ends the sign-in: nobody answers on another device here.
        if polls.testAndSet() { throw TestFailure("no answer") }
      }, output: output)
    #expect(run.status != 0)
    #expect(output.stderr.contains("To sign in, open"), "\(output.stderr)")
    #expect(!output.stderr.contains("\u{1B}") && !output.stderr.contains("\r"), "\(output.stderr.debugDescription)")
  }

  @Test func aConfidentialClientSignsInAsItself() async throws {
    let server = try await AuthServer.shared
    let run = try await tokenctl(["login", "local-service", "--client-credentials"], server: server)
    #expect(run.status == 0, "\(run.stderr)")
    let stored = try storedTokens("local-service")
    #expect(stored.account.id == server.serviceClientID)
    let token = try await tokenctl(["token", "local-service:\(server.serviceClientID)"], server: server)
    #expect(token.status == 0 && token.stdout == stored.tokens.accessToken + "\n")
  }
}
