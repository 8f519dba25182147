import Foundation
import NativeAppSupport
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// The glewlwyd harness (`Tests/Support/glewlwyd-server.py`, `glewlwyd-browser.py`) does what the
/// registration tests will need: a real server that registers native clients (RFC 7591)
/// and lets them manage their registration (RFC 7592), and a user who signs in there with
/// the tokenctl of today and a client registered by hand. It also pins down the quirks of
/// glewlwyd 2.7.5 that tokenctl's registration must live with, so that a Debian update
/// that changes them shows up here.
extension GlewlwydSuites {
  @Suite struct GlewlwydServerTests {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
      "tokenctl-glewlwyd-test-\(UUID().uuidString)")
    let group = TokenStoreConformance.freshGroup()
    var store: SecretServiceTokenStore { SecretServiceTokenStore(group: group) }

    init() throws {
      try FileManager.default.createDirectory(
        at: scratch.appendingPathComponent("config/tokenctl"), withIntermediateDirectories: true)
    }

    /// RFC 7591 §2 metadata of a native app (RFC 8252) that keeps no secret.
    static func nativeClientMetadata(redirectURI: String) -> [String: Any] {
      [
        "client_name": "tokenctl", "redirect_uris": [redirectURI], "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        "application_type": "native",
      ]
    }

    struct Reply {
      var status: Int
      var headers: [HTTPHeader]
      var json: [String: Any]
    }

    func send(_ method: String, _ url: String, json: [String: Any]? = nil, bearer: String? = nil) async throws -> Reply
    {
      var headers: [HTTPHeader] = [HTTPHeader("Accept", "application/json")]
      var body: [UInt8]?
      if let json {
        headers.append(HTTPHeader("Content-Type", "application/json"))
        body = Array(try JSONSerialization.data(withJSONObject: json))
      }
      if let bearer { headers.append(HTTPHeader("Authorization", "Bearer \(bearer)")) }
      let request = HTTPRequest(method: method, url: try #require(URL(string: url)), headers: headers, body: body)
      let response = try await CurlHTTPTransport().send(request)
      let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
      return Reply(status: response.status, headers: response.headers, json: object)
    }

    /// Registers `metadata`, which glewlwyd must accept.
    func register(_ metadata: [String: Any], at server: GlewlwydServer) async throws -> [String: Any] {
      let reply = try await send("POST", server.registrationEndpoint, json: metadata)
      // glewlwyd answers 200 where RFC 7591 §3.2.1 says 201 Created.
      try #require(reply.status == 200, "registration answered \(reply.status): \(reply.json)")
      return reply.json
    }

    /// A token request with a code that was never issued: glewlwyd authenticates the client
    /// first, so the error says whether it took the client for a public one.
    func exchangeUnknownCode(clientID: String, server: GlewlwydServer) async throws -> String? {
      let request = HTTPRequest.form(
        try #require(URL(string: server.tokenEndpoint)),
        [
          ("grant_type", "authorization_code"), ("code", "never-issued"), ("redirect_uri", "http://127.0.0.1/callback"),
          ("client_id", clientID), ("code_verifier", String(repeating: "v", count: 43)),
        ])
      let response = try await CurlHTTPTransport().send(request)
      return ((try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any])?["error"] as? String
    }

    /// A port of 127.0.0.1 that is free now: the kernel's pick for a socket closed at once.
    static func freePort() throws -> UInt16 {
      let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      guard socket >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
      defer { close(socket) }
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      var length = socklen_t(MemoryLayout<sockaddr_in>.size)
      let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
        }
      }
      guard bound else { throw TestFailure("bind: \(String(cString: strerror(errno)))") }
      return UInt16(bigEndian: address.sin_port)
    }

    var environment: [String: String] {
      get async throws {
        var environment = try await GlewlwydServer.shared.browserEnvironment(scratch: scratch)
        environment["TOKENCTL_GROUP"] = group
        environment["TOKENCTL_ACCOUNT"] = nil
        return environment
      }
    }

    func tokenctl(_ arguments: String...) async throws -> ProcessResult {
      try await TestProcess.run(TestProcess.tokenctl, arguments, environment: try await environment)
    }

    /// Registers a public native client whose redirect URI is tokenctl's listener on a port
    /// chosen here, points tokenctl's `oidc` type at that port (glewlwyd compares redirect
    /// URIs exactly, port included), and signs in as ada with the tokenctl built beside us.
    /// Returns the registration and the account.
    func signInWithRegisteredClient(_ server: GlewlwydServer) async throws -> ([String: Any], StoredAccount) {
      var registration: [String: Any] = [:]
      // The port is free when chosen, but another test may bind it before tokenctl listens
      // (CI's full suite once did): then a new port, and a new registration for it.
      for attempt in 1...3 {
        let port = try Self.freePort()
        var metadata = Self.nativeClientMetadata(redirectURI: "http://127.0.0.1:\(port)/")
        // glewlwyd 2.7.5 takes a client registered with token_endpoint_auth_method "none" for a
        // confidential one (see aClientRegisteredWithoutASecretIsStillConfidential); its own
        // member client_confidential (doc/OIDC.md, "Client registration") makes it public.
        metadata["client_confidential"] = false
        registration = try await register(metadata, at: server)
        let clientID = try #require(registration["client_id"] as? String)
        try "[types.oidc]\nredirect_port = \(port)\n".write(
          to: scratch.appendingPathComponent("config/tokenctl/config.toml"), atomically: true, encoding: .utf8)

        let login = try await tokenctl("login", "oidc", "--browser", "--issuer", server.issuer, "--client-id", clientID)
        if login.status != 0, attempt < 3, login.stderr.contains("another program uses that port") { continue }
        let browserLog = (try? String(contentsOf: scratch.appendingPathComponent("browser.log"), encoding: .utf8)) ?? ""
        try #require(login.status == 0, "login: \(login.stderr)\nbrowser: \(browserLog)")
        break
      }
      let listing = try #require(try store.list(AccountQuery(type: "oidc")).first)
      return (registration, try #require(try store.load(listing.account.key)))
    }

    @Test func discoveryAtTheIssuerListsTheRegistrationEndpoint() async throws {
      let server = try await GlewlwydServer.shared
      let discovery = try await send("GET", server.issuer + "/.well-known/openid-configuration")
      #expect(discovery.status == 200)
      #expect(discovery.json["issuer"] as? String == server.issuer)
      #expect(discovery.json["registration_endpoint"] as? String == server.registrationEndpoint)
      #expect(discovery.json["code_challenge_methods_supported"] as? [String] == ["S256"])
    }

    @Test func aNativeClientRegistersWithoutAnInitialAccessToken() async throws {
      let server = try await GlewlwydServer.shared
      let reply = try await send(
        "POST", server.registrationEndpoint, json: Self.nativeClientMetadata(redirectURI: "http://127.0.0.1/callback"))
      #expect(reply.status == 200, "glewlwyd's answer to a registration: 200, not RFC 7591's 201")
      let clientID = try #require(reply.json["client_id"] as? String)
      #expect(!clientID.isEmpty)
      #expect(reply.json["client_secret"] == nil, "token_endpoint_auth_method none: no secret")
      #expect(reply.json["token_endpoint_auth_method"] as? String == "none")
      #expect(reply.json["redirect_uris"] as? [String] == ["http://127.0.0.1/callback"])
      #expect((reply.json["registration_access_token"] as? String)?.isEmpty == false)
      #expect(reply.json["registration_client_uri"] as? String == server.registrationEndpoint + "/" + clientID)
      #expect(reply.json["client_id_issued_at"] is Int && reply.json["client_secret_expires_at"] as? Int == 0)
    }

    /// The quirk the registration code must know about: glewlwyd 2.7.5 reads
    /// token_endpoint_auth_method as an array when it decides whether a registered client is
    /// confidential (`convert_client_registration_to_glewlwyd`), so the RFC 7591 string
    /// "none" leaves it confidential with no secret, and the token endpoint refuses it.
    @Test func aClientRegisteredWithoutASecretIsStillConfidential() async throws {
      let server = try await GlewlwydServer.shared
      let metadata = Self.nativeClientMetadata(redirectURI: "http://127.0.0.1/callback")
      let standard = try #require(try await register(metadata, at: server)["client_id"] as? String)
      #expect(try await exchangeUnknownCode(clientID: standard, server: server) == "unauthorized_client")
      var extended = metadata
      extended["client_confidential"] = false
      let publicClient = try #require(try await register(extended, at: server)["client_id"] as? String)
      #expect(try await exchangeUnknownCode(clientID: publicClient, server: server) == "invalid_code")
    }

    /// RFC 8252 §7.3 lets a native app's loopback redirect use any port; glewlwyd compares
    /// the whole URI: a port it was not registered with gets 403, and no redirect.
    @Test func aLoopbackRedirectURIMustMatchPortIncluded() async throws {
      let server = try await GlewlwydServer.shared
      let registration = try await register(
        Self.nativeClientMetadata(redirectURI: "http://127.0.0.1/callback"), at: server)
      let clientID = try #require(registration["client_id"] as? String)
      func authorize(_ redirectURI: String) async throws -> Reply {
        var components = try #require(URLComponents(string: server.issuer + "/auth"))
        components.queryItems = [
          URLQueryItem(name: "response_type", value: "code"), URLQueryItem(name: "client_id", value: clientID),
          URLQueryItem(name: "redirect_uri", value: redirectURI), URLQueryItem(name: "scope", value: "openid"),
          URLQueryItem(name: "state", value: "s"), URLQueryItem(name: "nonce", value: "n"),
          URLQueryItem(name: "code_challenge", value: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"),
          URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        return try await send("GET", try #require(components.url?.absoluteString))
      }
      let exact = try await authorize("http://127.0.0.1/callback")
      #expect(exact.status == 302)
      #expect(exact.headers.first { $0.name.lowercased() == "location" }?.value.contains("/login.html?") == true)
      #expect(try await authorize("http://127.0.0.1:8400/callback").status == 403)
    }

    @Test func tokenctlSignsInWithARegisteredClientAndItsTokenIsAccepted() async throws {
      try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
      let server = try await GlewlwydServer.shared
      let (registration, signedIn) = try await signInWithRegisteredClient(server)
      #expect(signedIn.account.issuer == server.issuer)
      #expect(signedIn.account.clientID == registration["client_id"] as? String)
      #expect(signedIn.tokens.refreshToken != nil && signedIn.tokens.idToken != nil)

      let token = try await tokenctl("token", "oidc:\(signedIn.account.name)")
      #expect(token.status == 0, "\(token.stderr)")
      let accessToken = token.stdout.trimmingCharacters(in: .newlines)
      let userinfo = try await send("GET", server.userinfoEndpoint, bearer: accessToken)
      #expect(userinfo.status == 200)
      #expect(userinfo.json["email"] as? String == "ada@example.org")
      let subject = try #require(userinfo.json["sub"] as? String)
      #expect(signedIn.account.id.hasSuffix("|\(subject)"), "the account is glewlwyd's subject")

      // Every refresh rotates the refresh token (refresh-token-one-use "always").
      let refresh = try await tokenctl("refresh", "oidc:\(signedIn.account.name)")
      #expect(refresh.status == 0, "\(refresh.stderr)")
      let refreshed = try #require(try store.load(signedIn.account.key))
      #expect(refreshed.tokens.refreshToken != signedIn.tokens.refreshToken)

      // Nothing secret in the server's or the browser's log.
      let logs = [server.log, scratch.appendingPathComponent("browser.log").path].map {
        (try? String(contentsOfFile: $0, encoding: .utf8)) ?? ""
      }.joined()
      let secrets =
        [accessToken, server.password, registration["registration_access_token"] as? String]
        + [signedIn.tokens.refreshToken, refreshed.tokens.accessToken, refreshed.tokens.refreshToken]
      for secret in secrets.compactMap({ $0 }) where !secret.isEmpty {
        #expect(!logs.contains(secret), "a secret in the logs")
      }
    }

    /// RFC 7592 §2.3 asks the server to invalidate the deleted client's grants and tokens.
    /// glewlwyd 2.7.5 only disables the client: its authorization requests get 403 and its
    /// access tokens 404 at /userinfo, but `check_client_valid` never looks at `enabled` for
    /// a client without a secret, so its refresh tokens still get new (useless) tokens.
    @Test func deletingTheRegistrationDisablesTheClient() async throws {
      try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
      let server = try await GlewlwydServer.shared
      let (registration, signedIn) = try await signInWithRegisteredClient(server)
      let uri = try #require(registration["registration_client_uri"] as? String)
      let registrationToken = try #require(registration["registration_access_token"] as? String)

      // RFC 7592 §2.1: read with the registration access token, and nothing without it.
      let read = try await send("GET", uri, bearer: registrationToken)
      #expect(read.status == 200)
      #expect(read.json["client_id"] as? String == signedIn.account.clientID)
      #expect(read.json["token_endpoint_auth_method"] as? [String] == ["none"], "an array, not RFC 7591's string")
      #expect(try await send("GET", uri, bearer: "not-the-token").status == 401)
      #expect(try await send("GET", server.userinfoEndpoint, bearer: signedIn.tokens.accessToken).status == 200)

      // RFC 7592 §2.3: delete (glewlwyd: 200, where the RFC says 204).
      let deleted = try await send("DELETE", uri, bearer: registrationToken)
      #expect(deleted.status == 200)
      #expect(try await send("GET", uri, bearer: registrationToken).status == 401, "the registration is gone")
      #expect(try await send("GET", server.userinfoEndpoint, bearer: signedIn.tokens.accessToken).status == 404)
      let login = try await tokenctl(
        "login", "oidc", "--browser", "--issuer", server.issuer, "--client-id", read.json["client_id"] as? String ?? "",
        "--timeout", "2")
      #expect(login.status != 0, "no new sign-in with a deleted client")
      let browserLog = (try? String(contentsOf: scratch.appendingPathComponent("browser.log"), encoding: .utf8)) ?? ""
      #expect(browserLog.contains("GET /api/oidc/auth 403"), "\(browserLog)")

      let refresh = try await tokenctl("refresh", "oidc:\(signedIn.account.name)")
      #expect(refresh.status == 0, "glewlwyd 2.7.5 still refreshes a deleted public client's tokens")
      let refreshed = try #require(try store.load(signedIn.account.key))
      #expect(try await send("GET", server.userinfoEndpoint, bearer: refreshed.tokens.accessToken).status == 404)
    }
  }
}

typealias GlewlwydServerTests = GlewlwydSuites.GlewlwydServerTests
