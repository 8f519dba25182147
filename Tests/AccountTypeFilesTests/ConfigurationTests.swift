import AccountTypeFiles
import Foundation
import Testing
import TokenKit

@Suite struct ConfigurationTests {
  /// A temporary directory holding `config.toml`, removed when the test ends.
  final class ConfigFile {
    let directory: URL
    var path: String { directory.appendingPathComponent("config.toml").path }
    var environment: [String: String] { ["TOKENCTL_CONFIG": path, "HOME": "/nonexistent"] }

    init() throws {
      directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-config-\(UUID().uuidString)")
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func write(_ text: String, mode: Int) throws {
      try Data(text.utf8).write(to: URL(fileURLWithPath: path))
      try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
  }

  static func parse(_ text: String) throws -> Configuration {
    try Configuration(parsing: Array(text.utf8), path: "config.toml")
  }

  // MARK: - Where the file is

  @Test(arguments: [
    (["TOKENCTL_CONFIG": "/etc/tokenctl.toml", "XDG_CONFIG_HOME": "/xdg", "HOME": "/home/ada"], "/etc/tokenctl.toml"),
    (["XDG_CONFIG_HOME": "/xdg", "HOME": "/home/ada"], "/xdg/tokenctl/config.toml"),
    (["HOME": "/home/ada"], "/home/ada/.config/tokenctl/config.toml"),
    // The XDG spec: a relative path is invalid and ignored; so is an empty value.
    (["XDG_CONFIG_HOME": "relative/dir", "HOME": "/home/ada"], "/home/ada/.config/tokenctl/config.toml"),
    (["XDG_CONFIG_HOME": "", "HOME": "/home/ada"], "/home/ada/.config/tokenctl/config.toml"),
    (["TOKENCTL_CONFIG": "", "HOME": "/home/ada"], "/home/ada/.config/tokenctl/config.toml"),
  ])
  func pathResolution(environment: [String: String], expected: String) {
    #expect(Configuration.path(environment: environment) == expected)
  }

  // MARK: - Reading

  @Test func aMissingFileIsAnEmptyConfiguration() throws {
    let file = try ConfigFile()
    #expect(try Configuration.load(environment: file.environment) == Configuration())
  }

  @Test func readsTheHookAndEveryTypeSetting() throws {
    let file = try ConfigFile()
    try file.write(
      """
      # tokenctl
      hook = "notify-send tokenctl \\"$TOKENCTL_EVENT\\""

      [types.graph]
      client_id = "00000000-0000-0000-0000-000000000000"

      [types.oidc]
      issuer = "https://accounts.example.com"
      client_id = "tokenctl"
      client_secret = "s3cr3t"
      scopes = ["openid", "email"]
      redirect_port = 8400
      """, mode: 0o600)
    let configuration = try Configuration.load(environment: file.environment)
    #expect(configuration.hook == "notify-send tokenctl \"$TOKENCTL_EVENT\"")
    #expect(
      configuration.types == [
        "graph": AccountTypeSettings(clientID: "00000000-0000-0000-0000-000000000000"),
        "oidc": AccountTypeSettings(
          clientID: "tokenctl", clientSecret: "s3cr3t", issuer: "https://accounts.example.com",
          scopes: ["openid", "email"], redirectPort: 8400),
      ])
  }

  @Test func inlineTablesWorkToo() throws {
    let configuration = try Self.parse("types = { graph = { client_id = \"x\" }, oidc = {} }")
    #expect(configuration.types == ["graph": AccountTypeSettings(clientID: "x"), "oidc": AccountTypeSettings()])
  }

  @Test(arguments: [
    ("hook = 1", "config.toml:1:8: expected a string for hook, found an integer"),
    ("huk = \"x\"", "config.toml:1:1: unknown key 'huk'; did you mean 'hook'?"),
    ("[type.graph]", "config.toml:1:2: unknown key 'type'; did you mean 'types'?"),
    ("[settings]", "config.toml:1:2: unknown key 'settings'"),
    ("types = 1", "config.toml:1:9: expected [types.ID] tables for types, found an integer"),
    ("[types]\ngraph = \"x\"", "config.toml:2:9: expected a table [types.graph], found a string"),
    (
      "[types.graph]\nclinet_id = \"x\"",
      "config.toml:2:1: unknown key 'clinet_id' in [types.graph]; did you mean 'client_id'?"
    ),
    ("[types.graph]\ncolour = 1", "config.toml:2:1: unknown key 'colour' in [types.graph]"),
    (
      "[types.graph]\nclient_id = 1",
      "config.toml:2:13: expected a string for client_id in [types.graph], found an integer"
    ),
    (
      "[types.graph]\nissuer = true", "config.toml:2:10: expected a string for issuer in [types.graph], found a boolean"
    ),
    (
      "[types.graph]\nscopes = \"openid\"",
      "config.toml:2:10: expected an array of strings for scopes in [types.graph], found a string"
    ),
    (
      "[types.graph]\nscopes = [\"openid\", 1]",
      "config.toml:2:10: expected strings in scopes in [types.graph], found an integer"
    ),
    (
      "[types.graph]\nredirect_port = \"8400\"",
      "config.toml:2:17: expected an integer for redirect_port in [types.graph], found a string"
    ),
    (
      "[types.graph]\nredirect_port = 0", "config.toml:2:17: redirect_port in [types.graph] must be between 1 and 65535"
    ),
    (
      "[types.graph]\nredirect_port = 65536",
      "config.toml:2:17: redirect_port in [types.graph] must be between 1 and 65535"
    ),
    (
      "[types.graph]\nredirect_port = -1",
      "config.toml:2:17: redirect_port in [types.graph] must be between 1 and 65535"
    ),
    ("hook = \"a\\u0000b\"", "config.toml:1:8: hook must not contain a NUL character"),
    ("[types.graph]\nclient_id \"x\"", "config.toml:2:11: expected '=' after key 'types.graph.client_id'"),
  ])
  func mistakesAreReportedWithTheirPosition(document: String, message: String) {
    let error = #expect(throws: TokenKitError.self) { try Self.parse(document) }
    #expect(error?.code == .notConfigured)
    #expect(error?.message == message)
  }

  @Test func anUnknownKeyListsTheKnownOnes() {
    let error = #expect(throws: TokenKitError.self) { try Self.parse("[types.graph]\nsecret = 1") }
    #expect(
      error?.recovery
        == "Known keys in [types.graph]: client_id, client_secret, issuer, scopes, redirect_port, keep_fresh, authorization_parameters."
    )
  }

  @Test(arguments: [
    "[types.graph]\nclient_secret = hunter2hunter2",
    "[types.graph]\nclient_secret = 'hunter2hunter2' 'hunter2hunter2'",
    "[types.graph]\nclient_secret = ['hunter2hunter2']",
    "[types.graph]\nclient_secret = 'hunter2hunter2'\nclient_secret = 'hunter2hunter2'",
  ])
  func errorsNeverShowTheSecret(document: String) {
    let error = #expect(throws: TokenKitError.self) { try Self.parse(document) }
    #expect(error?.description.contains("hunter2") == false, "\(error?.description ?? "")")
  }

  @Test func theDescriptionRedactsTheSecret() throws {
    let configuration = try Self.parse("[types.graph]\nclient_id = 'id'\nclient_secret = 'hunter2'")
    #expect(!String(describing: configuration).contains("hunter2"))
    #expect(!String(reflecting: configuration).contains("hunter2"))
    var dumped = ""
    dump(configuration, to: &dumped)
    #expect(!dumped.contains("hunter2"))
    #expect(String(describing: configuration.types["graph"]!).contains("<redacted>"))
  }

  @Test func aSyntaxErrorInTheFileGivesItsPath() throws {
    let file = try ConfigFile()
    try file.write("[types.graph\n", mode: 0o600)
    let error = #expect(throws: TokenKitError.self) { try Configuration.load(environment: file.environment) }
    #expect(error?.message == "\(file.path):1:13: expected ']' after table name 'types.graph' in a header")
  }

  @Test func aDirectoryIsRefused() throws {
    let file = try ConfigFile()
    let error = #expect(throws: TokenKitError.self) { try Configuration.load(path: file.directory.path) }
    #expect(error?.message == "\(file.directory.path) is not a regular file")
  }

  @Test func anUnreadableFileIsAnError() throws {
    // root reads anything, so the check cannot fail there.
    guard getuid() != 0 else { return }
    let file = try ConfigFile()
    try file.write("hook = 'x'", mode: 0o000)
    let error = #expect(throws: TokenKitError.self) { try Configuration.load(path: file.path) }
    #expect(error?.message == "could not read \(file.path): Permission denied")
  }

  // MARK: - Permissions

  @Test(arguments: [0o644, 0o640, 0o604, 0o660])
  func aSecretInAFileOthersCanReadIsRefused(mode: Int) throws {
    let file = try ConfigFile()
    try file.write("[types.oidc]\nclient_id = 'id'\nclient_secret = 'hunter2'\n", mode: mode)
    let error = #expect(throws: TokenKitError.self) { try Configuration.load(environment: file.environment) }
    #expect(error?.code == .notConfigured)
    #expect(
      error?.message == "\(file.path) holds a client_secret but others can read it (mode \(String(mode, radix: 8)))")
    #expect(error?.recovery?.contains("chmod 600 \(file.path)") == true)
    #expect(error?.description.contains("hunter2") == false)
  }

  @Test(arguments: [0o600, 0o400])
  func aSecretInAPrivateFileIsRead(mode: Int) throws {
    let file = try ConfigFile()
    try file.write("[types.oidc]\nclient_secret = 'hunter2'\n", mode: mode)
    #expect(try Configuration.load(environment: file.environment).types["oidc"]?.clientSecret == "hunter2")
  }

  @Test(arguments: [0o664, 0o646, 0o666])
  func aHookInAFileOthersMayWriteIsRefused(mode: Int) throws {
    let file = try ConfigFile()
    try file.write("hook = 'notify-send x'\n", mode: mode)
    let error = #expect(throws: TokenKitError.self) { try Configuration.load(environment: file.environment) }
    #expect(
      error?.message.hasPrefix("\(file.path) may be changed by other users (mode \(String(mode, radix: 8)), ") == true)
    #expect(error?.recovery?.contains("chmod go-w \(file.path)") == true)
  }

  /// One line of config.toml (an issuer, a plugin's authority host)
  /// sends the next sign-in to another server, so a file others may change is refused
  /// whatever it holds, as ssh refuses such a config file.
  @Test(arguments: [0o666, 0o620, 0o646, 0o660])
  func anyFileOthersMayWriteIsRefused(mode: Int) throws {
    let file = try ConfigFile()
    try file.write("[types.graph]\nauthority_host = \"login.attacker.example\"\n", mode: mode)
    let error = #expect(throws: TokenKitError.self) { try Configuration.load(environment: file.environment) }
    #expect(error?.code == .notConfigured)
    let owner = try #require(Self.userName(geteuid()))
    #expect(
      error?.message
        == "\(file.path) may be changed by other users (mode \(String(mode, radix: 8)), owner \(owner)), "
        + "and whoever changes it decides where your sign-ins go")
    #expect(error?.recovery == "Run `chmod go-w \(file.path)`.")
  }

  @Test(.enabled(if: geteuid() == 0, "only root can give a file away"), arguments: [0o644, 0o600, 0o666])
  func aFileOwnedBySomeoneElseIsRefused(mode: Int) throws {
    let file = try ConfigFile()
    try file.write("[types.oidc]\nissuer = \"https://id.attacker.example\"\n", mode: mode)
    #expect(chown(file.path, 65534, 65534) == 0)
    let error = #expect(throws: TokenKitError.self) { try Configuration.load(environment: file.environment) }
    #expect(error?.code == .notConfigured)
    let owner = Self.userName(65534) ?? "uid 65534"
    #expect(
      error?.message
        == "\(file.path) belongs to another user (mode \(String(mode, radix: 8)), owner \(owner)), "
        + "and whoever changes it decides where your sign-ins go")
    let me = try #require(Self.userName(geteuid()))
    #expect(error?.recovery?.contains("chown \(me) \(file.path)") == true, "\(error?.recovery ?? "")")
    #expect(error?.recovery?.contains("chmod go-w \(file.path)") == (mode & 0o022 != 0))
  }

  /// The name of the user `uid`, as the messages give it.
  static func userName(_ uid: uid_t) -> String? {
    getpwuid(uid).flatMap { $0.pointee.pw_name.map { String(cString: $0) } }
  }

  @Test func aFileWithoutSecretsMayBeReadable() throws {
    let file = try ConfigFile()
    try file.write("hook = 'true'\n[types.graph]\nclient_id = 'id'\n", mode: 0o644)
    #expect(try Configuration.load(environment: file.environment).hook == "true")
  }

  // MARK: - Applying settings to the registry

  @Test func settingsReplaceClientScopesAndPort() throws {
    let registry = try BuiltinTypes.registry()
    let configured = try registry.applying([
      "graph": AccountTypeSettings(
        clientID: "app-id", clientSecret: "s3cr3t", scopes: ["User.Read", "offline_access"], redirectPort: 8400)
    ])
    let entry = try #require(configured.entry("graph"))
    #expect(entry.descriptor.clientID == "app-id")
    #expect(entry.descriptor.clientSecret == "s3cr3t")
    #expect(entry.descriptor.defaultScopes == ["User.Read", "offline_access"])
    #expect(entry.descriptor.redirect == .loopback(host: "localhost", port: 8400, path: "/"))
    #expect(entry.source == "plugin MicrosoftGraph + config.toml")
    // Everything else is the plugin's.
    let original = try registry.descriptor("graph")
    #expect(entry.descriptor.endpoints == original.endpoints)
    #expect(entry.descriptor.displayName == original.displayName)
    // Types without settings are untouched.
    #expect(configured.entry("oidc") == registry.entry("oidc"))
  }

  @Test func emptySettingsChangeOnlyTheSource() throws {
    let registry = try BuiltinTypes.registry()
    let configured = try registry.applying(["oidc": AccountTypeSettings()], source: "/etc/tokenctl.toml")
    #expect(configured.entry("oidc")?.descriptor == registry.entry("oidc")?.descriptor)
    #expect(configured.entry("oidc")?.source == "plugin OpenIDConnect + /etc/tokenctl.toml")
  }

  @Test(arguments: ["https://accounts.example.com", "https://idp.example.com/realms/corp", "http://127.0.0.1:8080"])
  func anIssuerMakesAGenericTypeDiscoverFromIt(issuer: String) throws {
    let configured = try BuiltinTypes.registry().applying(["oidc": AccountTypeSettings(issuer: issuer)])
    #expect(try configured.descriptor("oidc").endpoints == .discovered(issuer: URL(string: issuer)!))
  }

  @Test(arguments: [
    "http://accounts.example.com", "accounts.example.com", "https://", "https://example.com?tenant=1",
    "https://example.com#x", "ftp://example.com", "",
  ])
  func aBadIssuerIsRefused(issuer: String) throws {
    let error = #expect(throws: TokenKitError.self) {
      try BuiltinTypes.registry().applying(["oidc": AccountTypeSettings(issuer: issuer)])
    }
    #expect(error?.code == .notConfigured)
    #expect(error?.message.hasPrefix("config.toml: [types.oidc]: issuer ") == true, "\(error?.message ?? "")")
    #expect(error?.message.contains("must be an https URL without query or fragment") == true)
  }

  @Test func anIssuerForAFixedTypeIsRefused() throws {
    let error = #expect(throws: TokenKitError.self) {
      try BuiltinTypes.registry().applying(["graph": AccountTypeSettings(issuer: "https://login.example.com")])
    }
    #expect(error?.code == .notConfigured)
    #expect(
      error?.message
        == "config.toml: [types.graph]: account type graph has fixed endpoints; issuer applies only to types that discover them from a user-given issuer"
    )
  }

  @Test func anIssuerForATypeWithItsOwnIssuerIsRefused() throws {
    var registry = AccountTypeRegistry()
    try registry.register(
      EndpointDescriptor(
        id: "corp", displayName: "Corp", endpoints: .discovered(issuer: URL(string: "https://sso.corp.example")!)),
      source: "test")
    let error = #expect(throws: TokenKitError.self) {
      try registry.applying(["corp": AccountTypeSettings(issuer: "https://other.example")])
    }
    #expect(error?.message.contains("account type corp discovers its endpoints from https://sso.corp.example") == true)
  }

  @Test func settingsForAnUnknownTypeListTheKnownOnes() throws {
    let error = #expect(throws: TokenKitError.self) {
      try BuiltinTypes.registry().applying(["grpah": AccountTypeSettings(clientID: "x")])
    }
    #expect(error?.code == .unknownAccountType)
    #expect(error?.message == "config.toml: there is no account type 'grpah' to configure")
    #expect(error?.recovery?.hasPrefix("Known types: bitbucket, gitea, github, gitlab, google, graph, oidc.") == true)
  }

  @Test func aPortForAPastedRedirectIsRefused() throws {
    var registry = AccountTypeRegistry()
    try registry.register(
      EndpointDescriptor(
        id: "oob", displayName: "Out of band", endpoints: .discoveredFromUserIssuer,
        redirect: .manualPaste(redirectURI: "urn:ietf:wg:oauth:2.0:oob")),
      source: "test")
    let error = #expect(throws: TokenKitError.self) {
      try registry.applying(["oob": AccountTypeSettings(redirectPort: 8400)])
    }
    #expect(error?.message.contains("redirect_port applies only to loopback redirects") == true)
  }

  @Test(arguments: [
    (AccountTypeSettings(clientID: ""), "client_id must be non-empty printable ASCII"),
    (AccountTypeSettings(clientID: "tab\there"), "client_id must be non-empty printable ASCII"),
    (AccountTypeSettings(clientSecret: "hunter2\n"), "client_secret must be non-empty printable ASCII"),
    (AccountTypeSettings(scopes: []), "scopes is empty"),
    (AccountTypeSettings(scopes: ["openid email"]), "scope \"openid email\" is not a scope token"),
    (AccountTypeSettings(scopes: [""]), "scope \"\" is not a scope token"),
    (AccountTypeSettings(redirectPort: 0), "redirect_port must be 1–65535"),
  ])
  func malformedSettingsAreRefused(settings: AccountTypeSettings, message: String) throws {
    let error = #expect(throws: TokenKitError.self) { try BuiltinTypes.registry().applying(["oidc": settings]) }
    #expect(error?.code == .notConfigured)
    #expect(error?.message.hasPrefix("config.toml: [types.oidc]: \(message)") == true, "\(error?.message ?? "")")
    #expect(error?.description.contains("hunter2") == false)
  }

  @Test func aLoadedFileAppliesToTheRegistry() throws {
    let file = try ConfigFile()
    try file.write(
      "[types.oidc]\nissuer = 'https://accounts.example.com'\nclient_id = 'cli'\n[types.graph]\nclient_id = 'app'\n",
      mode: 0o644)
    let configuration = try Configuration.load(environment: file.environment)
    let registry = try BuiltinTypes.registry().applying(configuration.types)
    #expect(try registry.descriptor("oidc").clientID == "cli")
    #expect(
      try registry.descriptor("oidc").endpoints == .discovered(issuer: URL(string: "https://accounts.example.com")!))
    #expect(try registry.descriptor("graph").clientID == "app")
  }

  /// `[credentials.accounts]` is the general name of `[git.accounts]`: the same rules, for
  /// every tool's helper. One file uses one of the two.
  @Test func accountRulesHaveTheirGeneralNameAndTheirGitName() throws {
    for name in ["credentials", "git"] {
      let configuration = try Self.parse("[\(name).accounts]\n\"https://registry.example.org/\" = \"corp:ada\"\n")
      #expect(configuration.gitAccounts == ["https://registry.example.org/": "corp:ada"])
    }
    #expect(throws: TokenKitError.self) {
      try Self.parse("[credentials.accounts]\n\"https://a.example/\" = \"corp:ada\"\n[git]\n")
    }
    do {
      _ = try Self.parse("[credentials.accounts]\n\"ftp://a.example/\" = \"corp:ada\"\n")
      Issue.record("an ftp prefix was taken")
    } catch let error as TokenKitError {
      #expect(error.message.contains("in [credentials.accounts] is not an http or https URL"), "\(error.message)")
    }
  }
}
