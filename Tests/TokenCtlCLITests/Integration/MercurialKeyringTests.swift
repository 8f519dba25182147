import Foundation
import TestSupport
import Testing
import TokenKit

/// Mercurial with `mercurial_keyring` (Debian's `mercurial` and `mercurial-keyring`, on the
/// system's Python and its keyring) cloning from a repository that requires
/// authentication (`Tests/Support/hg-http-server.py`, every request checked at the real
/// authorization server). mercurial_keyring asks keyring for the service `Mercurial` and
/// the username `USER@@URL`; the backend (`Python/keyring-tokenctl`, which `make
/// keyring-backend-deps` installs for that Python as `pip install --user` would, here on
/// PYTHONPATH) answers for the URL as tokenctl's chooser picks.
@Suite(.serialized) struct MercurialKeyringTests {
  static let hgPath = "/usr/bin/hg"
  static let hasMercurial =
    FileManager.default.isExecutableFile(atPath: hgPath)
    && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/mercurial_keyring.py")
  static let backendSite = AuthServer.path(".build-python/keyring/system-site")
  static let hasBackend = FileManager.default.fileExists(atPath: backendSite + "/keyring_tokenctl.py")

  /// Where Mercurial learns the username, which mercurial_keyring needs before it asks.
  enum Username: String, CaseIterable, CustomTestStringConvertible {
    /// `[auth]` with a prefix: the key's URL is the prefix (`http://HOST:PORT`).
    case authSection
    /// `http://oauth2@HOST:PORT/repo`: the key's URL is the repository's.
    case url
    var testDescription: String { rawValue }
  }

  let fixture: ToolHelperFixture

  init() async throws {
    fixture = try await ToolHelperFixture.started(registry: "Tests/Support/hg-http-server.py")
  }

  /// Runs hg with only `hgrc` for configuration (mercurial_keyring enabled there), the
  /// backend on Python's path, no terminal to prompt on and no display, where keyring's
  /// other backends (KWallet's is activated over D-Bus) could open a dialog.
  func hg(
    _ arguments: [String], hgrc: String, environment extra: [String: String] = [:]
  ) async throws -> ProcessResult {
    let file = fixture.directory.path("hgrc")
    try ("[extensions]\nmercurial_keyring =\n" + hgrc).write(toFile: file, atomically: true, encoding: .utf8)
    var environment = fixture.environment.merging(extra) { $1 }
    environment["DISPLAY"] = nil
    environment["WAYLAND_DISPLAY"] = nil
    environment["HGRCPATH"] = file
    environment["HGPLAIN"] = "1"
    environment["PYTHONPATH"] = Self.backendSite
    environment["PYTHONDONTWRITEBYTECODE"] = "1"
    return try await TestProcess.run(Self.hgPath, ["--noninteractive"] + arguments, environment: environment)
  }

  @Test(
    .enabled(if: hasMercurial, "mercurial or mercurial-keyring is not installed (make deps installs Debian's)"),
    .enabled(if: hasBackend, "no .build-python/keyring/system-site: run make keyring-backend-deps"),
    arguments: Username.allCases)
  func hgClonesARepositoryThatRequiresAuthenticationWithTheAccountsToken(username: Username) async throws {
    defer { fixture.cleanUp() }
    let account = try await fixture.signIn(user: "ada")
    try fixture.expire(account)
    let old = try fixture.token(account)
    let destination = fixture.directory.path("clone")
    let clone: ProcessResult
    switch username {
    case .authSection:
      clone = try await hg(
        ["clone", fixture.registry + "/repo", destination],
        hgrc: "[auth]\ncorp.prefix = \(fixture.host)\ncorp.username = oauth2\ncorp.schemes = http\n")
    case .url:
      clone = try await hg(
        ["clone", fixture.registry.replacingOccurrences(of: "http://", with: "http://oauth2@") + "/repo", destination],
        hgrc: "")
    }
    #expect(
      clone.status == 0,
      "hg clone failed: did keyring_tokenctl answer mercurial_keyring?\n\(clone.stdout)\n\(clone.stderr)\n\(fixture.requests())"
    )
    #expect(
      (try? String(contentsOfFile: destination + "/hello.txt", encoding: .utf8))
        == "hello from the tokenctl test repository\n")
    // The expired token was refreshed first, and hg sent the fresh one and no other.
    let token = try fixture.token(account)
    #expect(token != old)
    #expect(try await fixture.server.introspect(token).active)
    #expect(fixture.tokensSent() == [fixture.fingerprint(token)], "hg sent the account's token and no other")
    #expect(
      fixture.requests().contains {
        ($0["path"] as? String)?.contains("cmd=getbundle") == true && ($0["status"] as? Int) == 200
      })
    #expect(!clone.stdout.contains(token) && !clone.stderr.contains(token))
  }

  /// A repository URL whose user name holds the URL of a served host
  /// (`http://oauth2%40%40http%3A%2F%2FTRUSTED%2F@OTHER/repo`, as a link or a `.hgsub`
  /// may name it): Mercurial decodes the user name, and mercurial_keyring asks for the key
  /// `oauth2@@http://TRUSTED/@@http://OTHER/repo`, which names both hosts. Whatever
  /// answered for TRUSTED, hg would send to OTHER, the server that asked; so the backend
  /// answers nothing, and no token reaches OTHER (a second repository server, which logs
  /// every credential it is sent).
  @Test(
    .enabled(if: hasMercurial, "mercurial or mercurial-keyring is not installed (make deps installs Debian's)"),
    .enabled(if: hasBackend, "no .build-python/keyring/system-site: run make keyring-backend-deps"))
  func hgSendsNoTokenToAHostWhoseURLNamesAServedHostInItsUserName() async throws {
    defer { fixture.cleanUp() }
    try await fixture.signIn(user: "ada")
    let other = try await ToolHelperFixture.started(registry: "Tests/Support/hg-http-server.py")
    let trusted = "oauth2@@http://\(fixture.host)/"
    let user = try #require(trusted.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
    let clone = try await hg(
      ["clone", "http://\(user)@\(other.host)/repo", fixture.directory.path("clone")], hgrc: "",
      environment: ["PYTHON_KEYRING_BACKEND": "keyring_tokenctl.TokenctlKeyring"])
    #expect(clone.status != 0, "\(clone.stdout)\n\(clone.stderr)")
    #expect(other.tokensSent().isEmpty, "hg sent a token to the host its URL named after the user name")
    #expect(!other.requests().isEmpty, "hg never reached the other server")
    #expect(fixture.tokensSent().isEmpty)
  }

  /// A repository on a host no type serves (`localhost` is not the type's `127.0.0.1`): the
  /// backend answers nothing, so mercurial_keyring falls back to its prompt, which hg
  /// refuses without a terminal; no token reaches the server and tokenctl says nothing.
  /// keyring asks our backend alone here: what the machine's other wallets answer is not
  /// this test's to find out.
  @Test(
    .enabled(if: hasMercurial, "mercurial or mercurial-keyring is not installed (make deps installs Debian's)"),
    .enabled(if: hasBackend, "no .build-python/keyring/system-site: run make keyring-backend-deps"))
  func hgGetsNothingForAHostNoTypeServes() async throws {
    defer { fixture.cleanUp() }
    try await fixture.signIn(user: "ada")
    let other = fixture.registry.replacingOccurrences(of: "http://127.0.0.1", with: "http://oauth2@localhost")
    let clone = try await hg(
      ["clone", other + "/repo", fixture.directory.path("clone")], hgrc: "",
      environment: ["PYTHON_KEYRING_BACKEND": "keyring_tokenctl.TokenctlKeyring"])
    #expect(clone.status != 0)
    #expect(clone.stderr.contains("http authorization required"), "\(clone.stderr)")
    #expect(!clone.stderr.contains("tokenctl"), "\(clone.stderr)")
    #expect(fixture.tokensSent().isEmpty)
    #expect(!fixture.requests().isEmpty, "hg never reached the server")
  }
}
