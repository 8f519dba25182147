import AccountTypeFiles
import Foundation
import Testing
import TokenKit

@Suite struct DescriptorFileTests {
  func parse(_ text: String) throws(DescriptorFileError) -> EndpointDescriptor {
    try DescriptorFile.parse(Array(text.utf8), source: "corp.toml")
  }

  @Test func aDiscoveredTypeWithEveryOptionalKey() throws {
    let descriptor = try parse(
      """
      id = "corp"
      display_name = "Corp single sign-on"
      issuer = "https://id.example.org/realms/staff"
      scopes = ["openid", "email", "offline_access"]
      client_id = "tokenctl"
      api_base = "https://api.example.org/v1/"

      [redirect]
      host = "localhost"
      port = 8400
      path = "/callback"

      [authorization_parameters]
      prompt = "select_account"
      kc_idp_hint = "ldap"

      [git]
      hosts = ["Git.Example.org", "gitlab.example.org"]
      username = "oauth2"

      [device_grant_error_aliases]
      authorization_declined = "access_denied"
      """)
    #expect(descriptor.id == "corp")
    #expect(descriptor.displayName == "Corp single sign-on")
    #expect(descriptor.endpoints == .discovered(issuer: URL(string: "https://id.example.org/realms/staff")!))
    #expect(descriptor.defaultScopes == ["openid", "email", "offline_access"])
    #expect(descriptor.clientID == "tokenctl")
    #expect(descriptor.clientSecret == nil)
    #expect(descriptor.tokenEndpointAuthentication == .none)
    #expect(descriptor.apiBase == URL(string: "https://api.example.org/v1/"))
    #expect(descriptor.redirect == .loopback(host: "localhost", port: 8400, path: "/callback"))
    #expect(descriptor.additionalAuthorizationParameters == ["prompt": "select_account", "kc_idp_hint": "ldap"])
    #expect(
      descriptor.git == GitIntegration(hosts: ["git.example.org", "gitlab.example.org"], username: .literal("oauth2")))
    #expect(descriptor.deviceGrantErrorAliases == ["authorization_declined": "access_denied"])
  }

  @Test func fixedEndpointsAndASecretDefaultToBasicAuthentication() throws {
    let descriptor = try parse(
      """
      id = "legacy"
      client_id = "app"
      client_secret = "s3cret"

      [endpoints]
      authorization = "https://auth.example.com/authorize"
      token = "http://127.0.0.1:9000/token"
      device_authorization = "https://auth.example.com/device"
      revocation = "https://auth.example.com/revoke"
      userinfo = "https://auth.example.com/userinfo"
      jwks = "https://auth.example.com/jwks"
      issuer = "https://auth.example.com"

      [redirect]
      paste = "urn:ietf:wg:oauth:2.0:oob"

      [git]
      hosts = ["git.example.com"]
      username = "account-name"
      """)
    #expect(descriptor.displayName == "legacy")
    #expect(
      descriptor.endpoints
        == .fixed(
          Endpoints(
            authorization: URL(string: "https://auth.example.com/authorize"),
            token: URL(string: "http://127.0.0.1:9000/token")!,
            deviceAuthorization: URL(string: "https://auth.example.com/device"),
            revocation: URL(string: "https://auth.example.com/revoke"),
            userinfo: URL(string: "https://auth.example.com/userinfo"),
            jwks: URL(string: "https://auth.example.com/jwks"), issuer: "https://auth.example.com")))
    #expect(descriptor.clientSecret == "s3cret")
    #expect(descriptor.tokenEndpointAuthentication == .clientSecretBasic)
    #expect(descriptor.redirect == .manualPaste(redirectURI: "urn:ietf:wg:oauth:2.0:oob"))
    #expect(descriptor.git?.username == .accountName)
    #expect(descriptor.defaultScopes.isEmpty)
  }

  /// `[credentials]` is the table of the hosts a type's tokens are for, whatever the tool;
  /// `[git]`, its earlier name, says the same.
  @Test(arguments: ["credentials", "git"])
  func theHostsTableHasItsGeneralNameAndItsGitName(name: String) throws {
    let descriptor = try parse(
      Self.base + "[\(name)]\nhosts = [\"Registry.example.org:5000\", \"git.example.org\"]\nusername = \"oauth2\"\n")
    #expect(
      descriptor.git
        == GitIntegration(hosts: ["registry.example.org:5000", "git.example.org"], username: .literal("oauth2")))
  }

  /// A file and the exact problems it must be reported with.
  struct Invalid: Sendable, CustomTestStringConvertible {
    var name: String
    var document: String
    var problems: [String]
    var testDescription: String { name }

    init(_ name: String, _ document: String, _ problems: String...) {
      self.name = name
      self.document = document
      self.problems = problems
    }
  }

  static let base = "id = \"corp\"\nissuer = \"https://id.example.org\"\n"

  static let invalid: [Invalid] = [
    Invalid(
      "an http endpoint off loopback",
      """
      id = "corp"
      [endpoints]
      authorization = "https://id.example.org/auth"
      token = "http://id.example.org/token"
      """,
      "corp.toml:4:9: token must be an https URL (http only on a loopback host)"),
    Invalid(
      "an http endpoint on a host named like a loopback address",
      """
      id = "corp"
      [endpoints]
      authorization = "https://id.example.org/auth"
      token = "http://127.0.0.1.attacker.example/token"
      """,
      "corp.toml:4:9: token must be an https URL (http only on a loopback host)"),
    Invalid(
      "an http API base on a host named like a loopback address",
      base + "api_base = \"http://127.attacker.example/v1/\"\n",
      "corp.toml:3:12: api_base must be an https URL (http only on a loopback host)"),
    Invalid(
      "a misspelt key", base + "clent_id = \"x\"\n",
      "corp.toml:3:1: unknown key 'clent_id'; did you mean 'client_id'?"),
    Invalid(
      "an unknown key far from any", base + "colour = \"blue\"\n", "corp.toml:3:1: unknown key 'colour'"),
    Invalid(
      "a misspelt endpoint",
      "id = \"corp\"\n[endpoints]\nauthorization = \"https://a.example/a\"\ntoken = \"https://a.example/t\"\nrevokation = \"https://a.example/r\"\n",
      "corp.toml:5:1: unknown key 'revokation' in [endpoints]; did you mean 'revocation'?"),
    Invalid(
      "no token endpoint", "id = \"corp\"\n[endpoints]\nauthorization = \"https://a.example/a\"\n",
      "corp.toml:2:2: missing key 'token' in [endpoints]"),
    Invalid(
      "no id", "issuer = \"https://id.example.org\"\n",
      "corp.toml: missing key 'id': the account type's id, such as id = \"corp\""),
    Invalid(
      "no endpoints at all", "id = \"corp\"\n",
      "corp.toml: missing key 'issuer' (endpoints discovered) or table [endpoints]"),
    Invalid(
      "a bad id", "id = \"Corp\"\nissuer = \"https://id.example.org\"\n",
      "corp.toml:1:6: id \"Corp\" must be lowercase letters, digits and '-', not starting with '-'"),
    Invalid(
      "an issuer with a query", "id = \"corp\"\nissuer = \"https://id.example.org/?tenant=1\"\n",
      "corp.toml:2:10: issuer must have no query or fragment (RFC 8414 §2)"),
    Invalid(
      "a wrong type", base + "scopes = \"openid email\"\n",
      "corp.toml:3:10: expected an array of strings for scopes, found a string"),
    Invalid(
      "a scope with a space", base + "scopes = [\"openid email\"]\n",
      "corp.toml:3:10: scope \"openid email\" is not a scope token: printable ASCII without spaces, '\"' or '\\' (RFC 6749 §3.3)"
    ),
    Invalid(
      "an unknown client authentication", base + "token_endpoint_auth_method = \"private_key_jwt\"\n",
      "corp.toml:3:30: token_endpoint_auth_method must be one of none, client_secret_basic, client_secret_post, not \"private_key_jwt\""
    ),
    Invalid(
      "a public redirect host", base + "[redirect]\nhost = \"example.org\"\n",
      "corp.toml:4:8: host must be \"127.0.0.1\" or \"localhost\" (RFC 8252 §7.3)"),
    Invalid("port zero", base + "[redirect]\nport = 0\n", "corp.toml:4:8: port must be between 1 and 65535"),
    Invalid(
      "paste and a port", base + "[redirect]\npaste = \"urn:ietf:wg:oauth:2.0:oob\"\nport = 80\n",
      "corp.toml:5:1: give either paste or a loopback redirect (host, port, path), not both"),
    Invalid(
      "state in the authorization parameters", base + "[authorization_parameters]\nstate = \"fixed\"\n",
      "corp.toml:4:1: authorization_parameters must not set state: tokenctl sets this protocol parameter itself"),
    Invalid(
      "scope in the authorization parameters", base + "[authorization_parameters]\nscope = \"openid\"\n",
      "corp.toml:4:1: authorization_parameters must not set scope: tokenctl sets this protocol parameter itself; use scopes"
    ),
    Invalid(
      "a code_ parameter", base + "[authorization_parameters]\ncode_verifier = \"x\"\n",
      "corp.toml:4:1: authorization_parameters must not set code_verifier: tokenctl sets this protocol parameter itself"
    ),
    Invalid(
      "a git table without username", base + "[git]\nhosts = [\"git.example.org\"]\n",
      "corp.toml:3:2: missing key 'username' in [git]: a fixed name, or \"account-name\""),
    Invalid(
      "a URL for a host", base + "[git]\nhosts = [\"https://git.example.org\"]\nusername = \"oauth2\"\n",
      "corp.toml:4:9: hosts must be host names such as \"git.example.org\""),
    Invalid(
      "a host with a path", base + "[git]\nhosts = [\"git.example.org/group\"]\nusername = \"oauth2\"\n",
      "corp.toml:4:9: hosts must be host names such as \"git.example.org\""),
    Invalid(
      "a credentials table without hosts", base + "[credentials]\nusername = \"oauth2\"\n",
      "corp.toml:3:2: missing key 'hosts' in [credentials]"),
    Invalid(
      "both names of the hosts table",
      base
        + "[credentials]\nhosts = [\"a.example\"]\nusername = \"u\"\n[git]\nhosts = [\"b.example\"]\nusername = \"u\"\n",
      "corp.toml:6:2: [credentials] and [git] are one table under two names: keep [credentials]"),
    Invalid(
      "an unknown device-grant error", base + "[device_grant_error_aliases]\ndeclined = \"nope\"\n",
      "corp.toml:4:12: declined in [device_grant_error_aliases] must name an RFC 8628 §3.5 error: access_denied, authorization_pending, expired_token, slow_down"
    ),
    Invalid(
      "a string for a boolean", base + "registration = \"yes\"\n",
      "corp.toml:3:16: expected true or false for registration, found a string"),
    Invalid(
      "zero seconds", base + "refresh_token_idle_lifetime = 0\n",
      "corp.toml:3:31: expected a positive integer (seconds) for refresh_token_idle_lifetime, found an integer"),
    Invalid(
      "aliases that are not a table", base + "device_grant_error_aliases = \"access_denied\"\n",
      "corp.toml:3:30: expected a table [device_grant_error_aliases], found a string"),
    Invalid(
      "a TOML syntax error", "id = \"corp\nissuer = 1\n",
      "corp.toml:1:6: expected '\"' to end the string on the line it starts; use \"\"\" for several lines"),
    Invalid(
      "several problems, in file order", "id = \"corp\"\nclient_id = 7\nissuer = \"ftp://x\"\n",
      "corp.toml:2:13: expected a string for client_id, found an integer",
      "corp.toml:3:10: issuer must be an https URL (http only on a loopback host)"),
  ]

  @Test(arguments: invalid) func invalidFilesAreReportedWithTheirPlace(_ example: Invalid) {
    #expect(throws: DescriptorFileError(problems: example.problems)) { try parse(example.document) }
  }

  @Test func everyProtocolParameterIsRefused() {
    for name in DescriptorFile.protocolParameters.sorted() {
      #expect(throws: DescriptorFileError.self) {
        try parse(Self.base + "[authorization_parameters]\n\(name) = \"x\"\n")
      }
    }
  }
}
