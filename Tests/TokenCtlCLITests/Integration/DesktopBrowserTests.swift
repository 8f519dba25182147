import Foundation
import NativeAppSupport
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenCtlCLI

/// What `make test-desktop` sets: Debian's chromium, chromium-driver, dunst and Xvfb are
/// there, with Selenium in `.build-python/desktop`. Without it these suites skip.
enum DesktopTests {
  static let enabled = ProcessInfo.processInfo.environment["TOKENCTL_TEST_DESKTOP"] == "1"

  /// Where the screenshots and page texts go, kept after the run for a person (or CI) to
  /// look at when a check fails: `.build/test-artefacts/desktop`, or TOKENCTL_TEST_ARTEFACTS.
  static let artefacts: URL = {
    let folder =
      ProcessInfo.processInfo.environment["TOKENCTL_TEST_ARTEFACTS"].map(URL.init(fileURLWithPath:))
      ?? URL(fileURLWithPath: AuthServer.path(".build/test-artefacts/desktop"))
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    print("desktop tests: screenshots and page texts in \(folder.path)")
    return folder
  }()
}

/// `tokenctl login` with a real browser: Debian's Chromium, headless, driven through
/// chromium-driver by Selenium (Tests/Support/chromium-browser.py as BROWSER), at the test
/// authorization server (django-oauth-toolkit), whose login form and consent page it fills
/// as a person would. Chromium follows the redirect to the loopback listener itself, with
/// whatever else it sends there; the page it shows is checked as a person reads it, from
/// its text and a screenshot.
@Suite(.serialized, .enabled(if: DesktopTests.enabled, "run with `make test-desktop`"))
struct DesktopBrowserTests {
  let backing = InMemoryTokenStore.Backing()
  let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-chromium-\(UUID().uuidString)")

  init() throws {
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
  }

  func registry(_ server: AuthServer) throws -> AccountTypeRegistry {
    var registry = AccountTypeRegistry()
    try registry.register(
      EndpointDescriptor(
        id: "local", displayName: "Test server",
        endpoints: .discovered(issuer: try #require(URL(string: server.issuer))),
        defaultScopes: ["openid", "profile", "email"], clientID: server.nativeClientID,
        redirect: .loopback(host: "127.0.0.1", path: "/callback")),
      source: "test")
    return registry
  }

  /// The page Chromium showed at the end, as chromium-browser.py saved it: title, visible
  /// text, and the screenshot's path.
  struct Page {
    var title: String
    var text: String
    var screenshot: String
  }

  /// `tokenctl login local` in-process, Chromium as the browser, answering the consent
  /// page with `action`; the page Chromium ended on is saved as `name`.
  func login(
    _ server: AuthServer, name: String, action: String
  ) async throws -> (status: Int32, stderr: String, page: Page) {
    let artefacts = DesktopTests.artefacts
    for suffix in [".png", ".json"] {
      try? FileManager.default.removeItem(at: artefacts.appendingPathComponent(name + suffix))
    }
    var environment = server.browserEnvironment(scratch: scratch)
    environment["BROWSER"] = AuthServer.path("Tests/Support/chromium-browser.py")
    environment["CHROMIUM_BROWSER_PYTHON"] = AuthServer.path(".build-python/desktop/bin/python")
    environment["CHROMIUM_BROWSER_SERVER_JSON"] = server.serverJSON
    environment["CHROMIUM_BROWSER_ARTEFACTS"] = artefacts.path
    environment["CHROMIUM_BROWSER_NAME"] = name
    environment["CHROMIUM_BROWSER_ACTION"] = action
    environment["CHROMIUM_BROWSER_LOG"] = scratch.appendingPathComponent("browser.log").path
    let output = CapturedOutput()
    let backing = backing
    let context = CLIContext(
      registry: try registry(server), makeStore: { InMemoryTokenStore(group: $0, backing: backing) },
      clock: SystemClock(), environment: environment, output: output, readLine: { nil },
      sleep: { try await Task.sleep(for: .seconds($0)) })
    let status = await TokenCtl.main(arguments: ["login", "local", "--timeout", "90"], context: context)
    // The browser saves the page a moment after the listener answered it.
    let saved = artefacts.appendingPathComponent(name + ".json")
    let deadline = Date().addingTimeInterval(30)
    while !FileManager.default.fileExists(atPath: saved.path), Date() < deadline {
      try await Task.sleep(for: .milliseconds(100))
    }
    let log = (try? String(contentsOf: scratch.appendingPathComponent("browser.log"), encoding: .utf8)) ?? ""
    let json = try #require(
      try? JSONSerialization.jsonObject(with: Data(contentsOf: saved)) as? [String: String],
      "Chromium saved no page; its log:\n\(log)\ntokenctl:\n\(output.stderr)")
    return (
      status, output.stderr,
      Page(
        title: json["title"] ?? "", text: json["text"] ?? "",
        screenshot: artefacts.appendingPathComponent(name + ".png").path)
    )
  }

  /// How many authorization codes the server was asked to redeem so far: its log has a
  /// line per request, and only this suite uses the server.
  func tokenRequests(_ server: AuthServer) throws -> Int {
    let log = URL(fileURLWithPath: server.serverJSON).deletingLastPathComponent().appendingPathComponent("server.log")
    return try String(contentsOf: log, encoding: .utf8).split(separator: "\n").count { $0.contains("POST /o/token/") }
  }

  static func pngSize(_ path: String) -> (width: Int, height: Int)? {
    guard let data = FileManager.default.contents(atPath: path), data.count > 24,
      data.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    else { return nil }
    let number = { (at: Int) in data[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
    return (number(16), number(20))
  }

  @Test func chromiumSignsInOnceAndThePageSaysTheWindowCanBeClosed() async throws {
    let server = try await AuthServer.shared
    let before = try tokenRequests(server)
    let (status, stderr, page) = try await login(server, name: "signed-in", action: "allow")
    #expect(status == 0, "\(stderr)")
    let stored = try InMemoryTokenStore(group: "default", backing: backing).list(AccountQuery(type: "local"))
    #expect(stored.map(\.account.name) == ["ada"], "the account is stored")
    #expect(try tokenRequests(server) - before == 1, "one code redemption, whatever else Chromium sent")
    #expect(page.title == "tokenctl: Signed in", "\(page.title)")
    #expect(page.text.contains("Signed in as ada at local."), "the account, once stored: \(page.text)")
    #expect(page.text.contains("You can close this window and return to the terminal"), "\(page.text)")
    let size = try #require(Self.pngSize(page.screenshot), "a screenshot at \(page.screenshot)")
    #expect(size.width > 0 && size.height > 0)
  }

  @Test func whenThePersonDeniesConsentThePageSaysWhatWentWrongAndWhatToDo() async throws {
    let server = try await AuthServer.shared
    let before = try tokenRequests(server)
    let (status, stderr, page) = try await login(server, name: "denied", action: "deny")
    #expect(status == 12, "\(stderr)")
    #expect(try InMemoryTokenStore(group: "default", backing: backing).list(.all).isEmpty)
    #expect(try tokenRequests(server) == before, "no code to redeem")
    #expect(page.title == "tokenctl: Not signed in", "\(page.title)")
    #expect(page.text.contains("the sign-in was refused (access_denied)"), "what went wrong: \(page.text)")
    #expect(
      page.text.contains("Run `tokenctl login local --timeout 90` again and allow access"), "what to do: \(page.text)")
    #expect(page.text.contains("return to the terminal"), "\(page.text)")
    #expect(Self.pngSize(page.screenshot) != nil, "a screenshot at \(page.screenshot)")
  }
}
