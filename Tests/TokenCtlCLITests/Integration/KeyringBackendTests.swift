import Foundation
import TestSupport
import Testing
import TokenKit

/// The Python keyring backend (`Python/keyring-tokenctl`) in the environment `make
/// keyring-backend-deps` makes (keyring from PyPI and the backend, installed as a user
/// would), with a real pip installing from an index that requires authentication
/// (`Tests/Support/python-index-server.py`), every request checked at the real authorization
/// server.
@Suite(.serialized) struct KeyringBackendTests {
  static let pythonPath = AuthServer.path(".build-python/keyring/bin/python")
  static let hasEnvironment = FileManager.default.isExecutableFile(atPath: pythonPath)

  let fixture: ToolHelperFixture

  init() async throws {
    fixture = try await ToolHelperFixture.started(registry: "Tests/Support/python-index-server.py")
  }

  var index: String { fixture.registry + "/simple/" }

  func python(_ arguments: [String], stdin: String = "") async throws -> ProcessResult {
    var environment = fixture.environment
    environment["PIP_CONFIG_FILE"] = "/dev/null"
    environment["PIP_NO_CACHE_DIR"] = "1"
    environment["PYTHONDONTWRITEBYTECODE"] = "1"
    return try await TestProcess.run(Self.pythonPath, arguments, environment: environment, stdin: stdin)
  }

  @Test(.enabled(if: hasEnvironment, "no .build-python/keyring: run make keyring-backend-deps"))
  func pipInstallsFromAnIndexThatRequiresAuthenticationWithTheAccountsToken() async throws {
    defer { fixture.cleanUp() }
    let account = try await fixture.signIn(user: "ada")
    let target = fixture.directory.path("site")
    let install = try await python([
      "-m", "pip", "install", "--no-input", "--keyring-provider", "import", "--disable-pip-version-check",
      "--index-url", index,
      "--target", target, "hello-tokenctl",
    ])
    #expect(install.status == 0, "\(install.stdout)\n\(install.stderr)\n\(fixture.requests())")
    #expect(FileManager.default.fileExists(atPath: target + "/hello_tokenctl/__init__.py"))
    let token = try fixture.token(account)
    #expect(try await fixture.server.introspect(token).active)
    #expect(fixture.tokensSent() == [fixture.fingerprint(token)], "pip sent the account's token and no other")
    #expect(
      fixture.requests().contains {
        ($0["path"] as? String)?.hasPrefix("/files/") == true && ($0["status"] as? Int) == 200
      })
    #expect(!install.stdout.contains(token) && !install.stderr.contains(token))
  }

  static let uvPath = AuthServer.path(".build-python/keyring/bin/uv")
  static let hasUV = FileManager.default.isExecutableFile(atPath: uvPath)

  /// uv asks keyring's command line (`--keyring-provider subprocess`), which it finds on
  /// PATH, and only for an index URL that names the username (the type's, here `oauth2`).
  @Test(.enabled(if: hasUV, "no uv in .build-python/keyring: run make keyring-backend-deps"))
  func uvInstallsFromAnIndexThatRequiresAuthenticationWithTheAccountsToken() async throws {
    defer { fixture.cleanUp() }
    let account = try await fixture.signIn(user: "ada")
    var environment = fixture.environment
    let bin = URL(fileURLWithPath: Self.pythonPath).deletingLastPathComponent().path
    environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    environment["UV_NO_CONFIG"] = "1"
    environment["UV_CACHE_DIR"] = fixture.directory.path("uv-cache")
    environment["UV_PYTHON_DOWNLOADS"] = "never"
    let target = fixture.directory.path("site")
    let install = try await TestProcess.run(
      Self.uvPath,
      [
        "pip", "install", "--keyring-provider", "subprocess", "--index-url",
        index.replacingOccurrences(of: "http://", with: "http://oauth2@"), "--python", Self.pythonPath,
        "--target", target, "hello-tokenctl",
      ], environment: environment)
    #expect(install.status == 0, "\(install.stdout)\n\(install.stderr)\n\(fixture.requests())")
    #expect(FileManager.default.fileExists(atPath: target + "/hello_tokenctl/__init__.py"))
    let token = try fixture.token(account)
    #expect(fixture.tokensSent() == [fixture.fingerprint(token)], "uv sent the account's token and no other")
    #expect(!install.stdout.contains(token) && !install.stderr.contains(token))
  }

  @Test(.enabled(if: hasEnvironment, "no .build-python/keyring: run make keyring-backend-deps"))
  func keyringAnswersForServedHostsOnlyAndIsReadOnly() async throws {
    defer { fixture.cleanUp() }
    let account = try await fixture.signIn(user: "ada")
    try fixture.expire(account)
    let old = try fixture.token(account)
    let backends = try await python(["-m", "keyring", "--list-backends"])
    #expect(backends.stdout.contains("keyring_tokenctl.TokenctlKeyring (priority: 9)"), "\(backends.stdout)")

    // By URL and by host, as pip asks; the expired token is refreshed first.
    let get = try await python(["-m", "keyring", "get", index, "oauth2"])
    #expect(get.status == 0, "\(get.stderr)")
    let token = try fixture.token(account)
    #expect(token != old)
    #expect(get.stdout == token + "\n")
    let byHost = try await python(["-m", "keyring", "get", fixture.host, "oauth2"])
    #expect(byHost.stdout == token + "\n", "\(byHost.stderr)")

    // Another host: nothing, and keyring's next backend (none here) may answer.
    let other = try await python(["-m", "keyring", "get", "https://pypi.example.org/simple/", "oauth2"])
    #expect(other.status == 1)
    #expect(other.stdout.isEmpty)
    #expect(!other.stderr.contains("tokenctl"), "\(other.stderr)")

    let set = try await python(["-m", "keyring", "set", index, "oauth2"], stdin: "a-password\n")
    #expect(set.status != 0)
    #expect(set.stderr.contains("'tokenctl login'"), "\(set.stderr)")
    #expect(try fixture.token(account) == token)
  }
}
