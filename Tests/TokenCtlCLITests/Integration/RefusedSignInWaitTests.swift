import Foundation
import TestSupport
import Testing

/// A browser sign-in the provider refuses in the browser (a mistyped client id) never comes
/// back to the listener: the provider shows its error page and stops there. tokenctl says,
/// before its timeout, what it waits for, what an error page in the browser means, how to
/// stop and what to try. The built tokenctl against the real authorization server
/// (django-oauth-toolkit), with the scripted user's browser, which meets the error page.
@Suite struct RefusedSignInWaitTests {
  @Test func aMistypedClientIDIsSaidToBeAPossibleCauseLongBeforeTheTimeout() async throws {
    let server = try await AuthServer.shared
    let scratch = try TemporaryDirectory()
    let home = URL(fileURLWithPath: scratch.path("home"))
    try server.writeType(id: "local", displayName: "Test server", scopes: ["openid"], home: home)
    let environment = server.browserEnvironment(scratch: home)
    let timeout = 120
    let stderr = scratch.path("stderr")
    let started = Date()
    let login = try TestProcess(
      TestProcess.tokenctl,
      ["login", "local", "--client-id", "mistyped-client", "--browser", "--timeout", String(timeout)],
      environment: environment, stderr: stderr)
    var said = ""
    var stillWaiting = false
    while Date().timeIntervalSince(started) < 30 {
      said = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
      if said.contains("Ctrl-C") {
        stillWaiting = kill(login.pid, 0) == 0
        break
      }
      try await Task.sleep(for: .milliseconds(100))
    }
    let waited = Date().timeIntervalSince(started)
    login.terminate(signal: SIGINT)
    #expect(stillWaiting, "\(said)")
    #expect(waited < Double(timeout) / 4, "\(waited) s")
    let words = said.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    #expect(words.contains("Waiting up to 2 min for the browser to come back to http://127.0.0.1:"), "\(said)")
    #expect(
      words.contains(
        "If the browser shows an error page instead, the provider refused the client id or the redirect address"),
      "\(said)")
    #expect(words.contains("stop with Ctrl-C"), "\(said)")
    #expect(
      words.contains(
        "try `tokenctl login local --client-id mistyped-client --paste --timeout 120` or `tokenctl login local "
          + "--client-id mistyped-client --device --timeout 120`"), "\(said)")
    #expect(
      words.contains("needs that port as redirect_port in the [types.local] table of config.toml"), "\(said)")
    // Said once.
    #expect(said.components(separatedBy: "Ctrl-C").count == 2, "\(said)")
  }
}
