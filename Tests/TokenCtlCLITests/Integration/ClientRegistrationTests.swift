import Foundation
import NativeAppSupport
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// Dynamic client registration (RFC 7591, RFC 7592) as a new user meets it: `tokenctl
/// login oidc --issuer URL` with no client id anywhere. Against a real server that lets
/// clients register (glewlwyd, Debian's) for what works, and our stub for the refusals a
/// real server will not produce on demand. The real tokenctl binary, the real keyring.
extension GlewlwydSuites {
  @Suite struct ClientRegistrationTests {
    let directory: TemporaryDirectory
    let group = TokenStoreConformance.freshGroup()
    let registrations = SecretServiceClientRegistrationStore()

    init() throws {
      try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
      directory = try TemporaryDirectory()
    }

    var store: SecretServiceTokenStore { SecretServiceTokenStore(group: group) }

    /// tokenctl's world: a browser that signs ada in at glewlwyd, a home of the test's own.
    func environment(_ server: GlewlwydServer) -> [String: String] {
      var environment = server.browserEnvironment(scratch: directory.url)
      environment["TOKENCTL_GROUP"] = group
      environment["TOKENCTL_AGENT"] = "0"
      environment["TOKENCTL_LOG"] = nil
      return environment
    }

    func tokenctl(_ arguments: [String], _ environment: [String: String]) async throws -> ProcessResult {
      try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
    }

    /// GETs `url` with `token` as a bearer token and returns the status.
    func status(of url: String, bearer token: String) async throws -> Int {
      let request = HTTPRequest(
        method: "GET", url: try #require(URL(string: url)), headers: [HTTPHeader("Authorization", "Bearer \(token)")])
      return try await CurlHTTPTransport().send(request).status
    }

    @Test func aSignInWithoutAClientRegistersOneAtTheIssuerAndTheNextReusesIt() async throws {
      let server = try await GlewlwydServer.shared
      defer { _ = try? registrations.remove(issuer: server.issuer) }
      let environment = environment(server)

      let first = try await tokenctl(["login", "oidc", "--issuer", server.issuer], environment)
      #expect(first.status == 0, "\(first.stderr)")
      #expect(first.stderr.contains("Registered tokenctl at \(server.issuer) as client "))
      let registration = try #require(try registrations.load(issuer: server.issuer))
      #expect(registration.registrationAccessToken != nil && registration.registrationClientURI != nil)
      #expect(registration.clientSecret == nil)
      let account = try #require(try store.list(.all).first?.account)
      #expect(account.clientID == registration.clientID && account.issuer == server.issuer)
      let token = try await tokenctl(["token", "oidc:\(account.name)"], environment)
      #expect(
        try await status(of: server.userinfoEndpoint, bearer: token.stdout.trimmingCharacters(in: .newlines)) == 200)

      // The registration is an item of its own; its attributes hold no secret.
      let search = try await TestProcess.run(
        "secret-tool", ["search", "--all", "xdg:schema", "org.tokenctl.Client"],
        environment: ProcessInfo.processInfo.environment, mergingStandardError: true)
      #expect(search.stdout.contains("attribute.client-id = \(registration.clientID)"))
      #expect(!search.stdout.contains("attribute.registration"))

      // Again: the same client, and the port it was registered with (glewlwyd compares
      // redirect URIs port included).
      let second = try await tokenctl(["login", "oidc", "--issuer", server.issuer], environment)
      #expect(second.status == 0, "\(second.stderr)")
      #expect(!second.stderr.contains("Registered"))
      #expect(try registrations.load(issuer: server.issuer) == registration)
      #expect(try store.list(.all).map(\.account.clientID) == [registration.clientID])
      // doctor knows the type has its client.
      let doctor = try await tokenctl(["doctor", "--json"], environment)
      let checks =
        try #require(
          try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any])["checks"]
        as? [[String: Any]]
      let clientCheck = try #require(checks?.first { $0["id"] as? String == "client-id:oidc" })
      #expect(clientCheck["status"] as? String == "ok")
      #expect((clientCheck["detail"] as? String)?.contains("client \(registration.clientID), registered at") == true)

      // Signing out of the last account leaves the registration alone.
      let revoke = try await tokenctl(["revoke", "--local", "oidc:\(account.name)"], environment)
      #expect(revoke.status == 0, "\(revoke.stderr)")
      #expect(try store.list(.all).isEmpty)
      #expect(try registrations.load(issuer: server.issuer) == registration)

      // unregister deletes it at the server (RFC 7592), then here.
      let uri = try #require(registration.registrationClientURI).absoluteString
      let token7592 = try #require(registration.registrationAccessToken)
      #expect(try await status(of: uri, bearer: token7592) == 200)
      let unregister = try await tokenctl(["unregister", server.issuer], environment)
      #expect(unregister.status == 0, "\(unregister.stderr)")
      #expect(unregister.stderr.contains("Deleted client \(registration.clientID) at \(server.issuer)"))
      #expect(try registrations.load(issuer: server.issuer) == nil)
      #expect(try await status(of: uri, bearer: token7592) != 200)
      let again = try await tokenctl(["unregister", server.issuer], environment)
      #expect(again.status == 14 && again.stderr.contains("registered no client at \(server.issuer)"))

      for secret in [token7592, token.stdout.trimmingCharacters(in: .newlines)] {
        #expect(!(first.stderr + second.stderr + unregister.stderr).contains(secret))
      }
    }

    /// An issuer typed with a trailing slash is the server's
    /// own, spelt another way. Nothing is used (the issuer must match exactly), but the
    /// server is not blamed: what differs is said, and the hint, run through /bin/sh as
    /// printed, signs in.
    @Test func anIssuerWithATrailingSlashIsSaidSoWithTheCommandThatWorks() async throws {
      let server = try await GlewlwydServer.shared
      defer { _ = try? registrations.remove(issuer: server.issuer) }
      var environment = environment(server)
      let slashed = server.issuer + "/"
      let refused = try await tokenctl(["login", "oidc", "--issuer", slashed, "--browser"], environment)
      #expect(refused.status == 14, "\(refused.stderr)")
      #expect(
        refused.stderr.contains(
          "names its issuer \(server.issuer), not \(slashed) as given (the server's has no trailing slash)"),
        "\(refused.stderr)")
      #expect(!refused.stderr.contains("misbehaved"))
      let hint = try #require(refused.stderr.split(separator: "\n").first { $0.hasPrefix("hint: ") })
      #expect(hint == "hint: Run `tokenctl login oidc --issuer \(server.issuer) --browser`.", "\(hint)")
      #expect(try store.list(.all).isEmpty && (try registrations.load(issuer: server.issuer)) == nil)

      let binaries = URL(fileURLWithPath: TestProcess.tokenctl).deletingLastPathComponent().path
      environment["PATH"] = binaries + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
      let again = try await TestProcess.run(
        "/bin/sh", ["-c", String(hint.split(separator: "`")[1])], environment: environment)
      #expect(again.status == 0, "\(again.stderr)")
      #expect(try store.list(.all).first?.account.issuer == server.issuer)
      for listing in try store.list(.all) { _ = try? store.remove(listing.account.key) }
    }

    /// glewlwyd 2.7.5 with its device grant on lists the
    /// standard device grant in discovery, but its registration refuses a client asking for
    /// it (`invalid_client_metadata`; it knows the grant by a name of its own). The device
    /// grant is optional: tokenctl registers without it, and the sign-in goes on.
    @Test func aServerThatRefusesTheDeviceGrantAtRegistrationGetsAClientWithoutIt() async throws {
      let server = try await GlewlwydServer.withDeviceGrant
      defer { _ = try? registrations.remove(issuer: server.issuer) }
      let login = try await tokenctl(["login", "oidc", "--issuer", server.issuer, "--browser"], environment(server))
      #expect(login.status == 0, "\(login.stderr)")
      #expect(login.stderr.contains("Registered tokenctl at \(server.issuer) as client "), "\(login.stderr)")
      let registration = try #require(try registrations.load(issuer: server.issuer))
      #expect(try store.list(.all).first?.account.clientID == registration.clientID)
      for listing in try store.list(.all) { _ = try? store.remove(listing.account.key) }
    }

    @Test func aTypeFileWithRegistrationTrueRegistersToo() async throws {
      let server = try await GlewlwydServer.shared
      defer { _ = try? registrations.remove(issuer: server.issuer) }
      try UserTypeFile(
        id: "corp", displayName: "Corp sign-in", issuer: server.issuer, scopes: ["openid", "email"],
        more: "registration = true\n\n[registration_metadata]\nclient_confidential = false"
      ).write(configHome: directory.url.appendingPathComponent("config"))
      let environment = environment(server)
      let login = try await tokenctl(["login", "corp"], environment)
      #expect(login.status == 0, "\(login.stderr)")
      let registration = try #require(try registrations.load(issuer: server.issuer))
      #expect(try store.list(.all).first?.account.clientID == registration.clientID)
      let refresh = try await tokenctl(["refresh", "--all"], environment)
      #expect(refresh.status == 0, "\(refresh.stderr)")
    }

    /// A type file that names an issuer but no scopes signs in with `openid`: before, it
    /// asked for none, and glewlwyd's userinfo endpoint refused the token it issued.
    @Test func aTypeFileWithoutScopesSignsInWithOpenID() async throws {
      let server = try await GlewlwydServer.shared
      defer { _ = try? registrations.remove(issuer: server.issuer) }
      let file = try UserTypeFile(
        id: "bare", displayName: "Bare sign-in", issuer: server.issuer,
        more: "registration = true\n\n[registration_metadata]\nclient_confidential = false"
      ).write(configHome: directory.url.appendingPathComponent("config"))
      let environment = environment(server)
      let check = try await tokenctl(["types", "--check", file.path], environment)
      #expect(check.status == 0, "\(check.stderr)")
      let login = try await tokenctl(["login", "bare"], environment)
      #expect(login.status == 0, "\(login.stderr)")
      let account = try #require(try store.list(.all).first?.account)
      #expect(account.scopes.contains("openid"), "\(account.scopes)")
      for listing in try store.list(.all) { _ = try? store.remove(listing.account.key) }
    }

    // MARK: Refusals, from the stub

    /// `login oidc` at a stub tenant whose registration endpoint answers as `kind` says, on
    /// the device grant (the stub has no authorization endpoint to sign in at).
    func loginAtStub(_ kind: String) async throws -> (ProcessResult, StubServer, issuer: String) {
      let stub = try await StubServer.start()
      let issuer = "\(stub.baseURL)/tenants/register-\(kind)"
      var environment = ProcessInfo.processInfo.environment
      environment["TOKENCTL_GROUP"] = group
      environment["TOKENCTL_AGENT"] = "0"
      environment["XDG_CONFIG_HOME"] = directory.path("config")
      environment["XDG_CACHE_HOME"] = directory.path("cache")
      environment["TOKENCTL_CONFIG"] = nil
      let login = try await tokenctl(["login", "oidc", "--issuer", issuer, "--device"], environment)
      return (login, stub, issuer)
    }

    @Test(arguments: [
      ("401", "lets only clients it trusts register (HTTP 401"),
      ("403", "lets only clients it trusts register (HTTP 403"),
      ("invalid_client_metadata", "does not accept a native public client without a secret (invalid_client_metadata"),
      ("invalid_redirect_uri", "does not accept the loopback redirect URI http://127.0.0.1/ (invalid_redirect_uri"),
    ])
    func aRefusedRegistrationSaysWhyAndHowToRegisterByHand(kind: String, reason: String) async throws {
      let (login, stub, issuer) = try await loginAtStub(kind)
      #expect(login.status == 14, "\(login.stderr)")
      #expect(login.stderr.contains("the server refused to register tokenctl as a client at \(issuer): it \(reason)"))
      #expect(
        login.stderr.contains("hint: Register a public client (no secret) with the redirect URI http://127.0.0.1/"))
      #expect(login.stderr.contains("tokenctl-providers(7)"))
      #expect(try registrations.load(issuer: issuer) == nil)
      #expect(try store.list(.all).isEmpty)
      // What was asked for: a native public client, as RFC 8252 §8.4 describes it.
      let sent = try #require((try await stub.admin("/_admin/stats")["registrations"] as? [[String: Any]])?.first)
      #expect(sent["token_endpoint_auth_method"] as? String == "none")
      #expect(sent["application_type"] as? String == "native")
      #expect(sent["client_name"] as? String == "tokenctl")
      #expect(sent["redirect_uris"] as? [String] == ["http://127.0.0.1/"])
      #expect(
        sent["grant_types"] as? [String]
          == ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"])
    }

    @Test func anIssuerWithoutARegistrationEndpointNeedsAClientID() async throws {
      let stub = try await StubServer.start()
      var environment = ProcessInfo.processInfo.environment
      environment["TOKENCTL_GROUP"] = group
      environment["TOKENCTL_AGENT"] = "0"
      environment["XDG_CONFIG_HOME"] = directory.path("config")
      environment["XDG_CACHE_HOME"] = directory.path("cache")
      let login = try await tokenctl(["login", "oidc", "--issuer", stub.baseURL, "--device"], environment)
      #expect(login.status == 14, "\(login.stderr)")
      #expect(
        login.stderr.contains(
          "does not let clients register themselves (its discovery document has no registration_endpoint)"))
    }

    @Test func aClientRegisteredAtTheStubSignsInWithTheDeviceGrantAndIsDeleted() async throws {
      let (login, stub, issuer) = try await loginAtStub("ok")
      defer { _ = try? registrations.remove(issuer: issuer) }
      #expect(login.status == 0, "\(login.stderr)")
      let registration = try #require(try registrations.load(issuer: issuer))
      #expect(registration.clientID.hasPrefix("stub-client-"))
      #expect(try store.list(.all).first?.account.clientID == registration.clientID)
      var environment = ProcessInfo.processInfo.environment
      environment["TOKENCTL_AGENT"] = "0"
      let unregister = try await tokenctl(["unregister", issuer], environment)
      #expect(unregister.status == 0, "\(unregister.stderr)")
      #expect(try registrations.load(issuer: issuer) == nil)
      // The stub answers 401 once the client is gone: a second delete would find nothing.
      #expect(
        (try await stub.admin("/_admin/stats")["requests"] as? [String: Int])?.keys.contains {
          $0.contains("/register/")
        }
          == true)
    }
  }
}

typealias ClientRegistrationTests = GlewlwydSuites.ClientRegistrationTests
