import CredentialHelpers
import NativeAppSupport
import TOMLReader
import TokenKit

/// tokenctl's configuration file, `config.toml`: the hook and the user's settings for
/// each account type.
///
/// It lives at `$TOKENCTL_CONFIG`, else `$XDG_CONFIG_HOME/tokenctl/config.toml`, else
/// `~/.config/tokenctl/config.toml`. No file means no settings. The file is TOML, in the
/// subset ``TOMLParser`` reads: no floats, dates or arrays of tables, none of which the
/// configuration needs. Unknown keys are errors, so a typo is reported instead of silently
/// ignored. A file that someone other than the user may change is refused, since one line
/// of it can send sign-ins elsewhere (``SettingsFile``).
///
/// ```toml
/// # A command run by /bin/sh on every account event, with TOKENCTL_EVENT,
/// # TOKENCTL_ACCOUNT and friends in its environment, and never a token.
/// hook = "notify-send tokenctl \"$TOKENCTL_EVENT: $TOKENCTL_ACCOUNT\""
///
/// # One table per account type id (`tokenctl types` lists them).
/// [types.graph]
/// # The application (client) id you registered with the provider.
/// client_id = "00000000-0000-0000-0000-000000000000"
///
/// [types.oidc]
/// # Only for types that discover endpoints from a user-given issuer.
/// issuer = "https://accounts.example.com"
/// client_id = "tokenctl"
/// # Some providers give desktop apps a secret. With one here, tokenctl refuses to read
/// # the file unless only you can read it: chmod 600 config.toml.
/// client_secret = "…"
/// # Replaces the type's default scopes.
/// scopes = ["openid", "email", "offline_access"]
/// # For an app registered with a fixed redirect URI, http://127.0.0.1:8400/.
/// redirect_port = 8400
/// # Added to the authorization request; these win over the type's own.
/// authorization_parameters = { prompt = "consent" }
///
/// # Which account answers git for a remote URL, when a host has several: the
/// # longest matching prefix wins (git-credential-tokenctl(1)). A prefix longer than
/// # the host needs `git config credential.useHttpPath true`.
/// [git.accounts]
/// "https://github.com/acme/" = "github:ada-at-acme"
/// ```
public struct Configuration: Sendable, Hashable {
  /// `hook`: a command line `/bin/sh -c` runs on account events.
  public var hook: String?
  /// `[types.ID]` tables, by account type id.
  public var types: [String: AccountTypeSettings]
  /// `[git.accounts]`: account references by remote URL prefix.
  public var gitAccounts: [String: String]
  /// `[agent]`: how the agent keeps accounts fresh.
  public var agent = AgentSettings()

  public init(hook: String? = nil, types: [String: AccountTypeSettings] = [:], gitAccounts: [String: String] = [:]) {
    self.hook = hook
    self.types = types
    self.gitAccounts = gitAccounts
  }

  /// Where the configuration is read from: `$TOKENCTL_CONFIG`, else under the XDG config
  /// directory (`$XDG_CONFIG_HOME`, else `$HOME/.config`).
  public static func path(environment: [String: String]) -> String {
    if let explicit = environment["TOKENCTL_CONFIG"], !explicit.isEmpty { return explicit }
    return XDGDirectories(environment: environment).config + "/config.toml"
  }

  /// Reads the configuration file that `environment` points to.
  public static func load(environment: [String: String]) throws -> Configuration {
    try load(path: path(environment: environment))
  }

  /// Reads the configuration at `path`; a missing file is an empty configuration.
  ///
  /// - Throws: ``TokenKitError`` `notConfigured` when the file cannot be read, is not
  ///   valid, or may be changed by someone else or, holding a client secret, read by them
  ///   (``SettingsFile/checkPermissions(holdsSecret:)``).
  public static func load(path: String) throws -> Configuration {
    guard let file = try SettingsFile.read(path) else { return Configuration() }
    let configuration = try Configuration(parsing: file.bytes, path: path)
    try file.checkPermissions(holdsSecret: configuration.types.values.contains { $0.clientSecret != nil })
    return configuration
  }

  /// Parses the bytes of a configuration file; `path` names it in errors. Checks no file
  /// permissions.
  public init(parsing bytes: [UInt8], path: String) throws {
    let table: TOMLTable
    do {
      table = try TOMLParser.parse(bytes, source: path)
    } catch {
      throw TokenKitError(.notConfigured, error.message)
    }
    self.init()
    var credentialsTable: String?
    for key in table.keys {
      guard let entry = table.entry(key) else { continue }
      switch key {
      case "hook":
        guard let hook = entry.value.string else {
          throw Self.problem(path, entry.valuePosition, "expected a string for hook, found \(entry.value.kind)")
        }
        // The command becomes a C string for execve, which a NUL would cut short.
        guard !hook.utf8.contains(0) else {
          throw Self.problem(path, entry.valuePosition, "hook must not contain a NUL character")
        }
        self.hook = hook
      case "types":
        guard let types = entry.value.table else {
          throw Self.problem(
            path, entry.valuePosition, "expected [types.ID] tables for types, found \(entry.value.kind)")
        }
        for id in types.keys {
          guard let typeEntry = types.entry(id) else { continue }
          guard let settings = typeEntry.value.table else {
            throw Self.problem(
              path, typeEntry.valuePosition,
              "expected a table [types.\(TOMLTable.displayKey(id))], found \(typeEntry.value.kind)")
          }
          self.types[id] = try Self.settings(settings, id: id, path: path)
        }
      case "credentials", "git":
        // One table under two names (DescriptorFile.credentialsTables): in one file, one.
        guard credentialsTable == nil else {
          throw Self.problem(
            path, entry.keyPosition, "[credentials] and [git] are one table under two names: keep [credentials]")
        }
        credentialsTable = key
        guard let git = entry.value.table else {
          throw Self.problem(
            path, entry.valuePosition, "expected a table [\(key)] for \(key), found \(entry.value.kind)")
        }
        gitAccounts = try Self.gitAccounts(git, name: key, path: path)
      case "agent":
        guard let table = entry.value.table else {
          throw Self.problem(path, entry.valuePosition, "expected a table [agent] for agent, found \(entry.value.kind)")
        }
        agent = try Self.agentSettings(table, path: path)
      default:
        throw Self.unknownKey(
          key, at: entry.keyPosition, in: nil, expected: ["hook", "types", "credentials", "git", "agent"], path: path)
      }
    }
  }

  /// The `[agent]` table.
  private static func agentSettings(_ table: TOMLTable, path: String) throws -> AgentSettings {
    var settings = AgentSettings()
    for key in table.keys {
      guard let entry = table.entry(key) else { continue }
      switch key {
      case "keep_fresh":
        guard let flag = entry.value.boolean else {
          throw problem(
            path, entry.valuePosition, "expected true or false for keep_fresh in [agent], found \(entry.value.kind)")
        }
        settings.keepFresh = flag
      case "refresh_at_percent":
        guard let percent = entry.value.integer, (50...95).contains(percent) else {
          throw problem(path, entry.valuePosition, "refresh_at_percent in [agent] must be an integer from 50 to 95")
        }
        settings.refreshAtPercent = Int(percent)
      default:
        throw unknownKey(key, at: entry.keyPosition, in: "[agent]", expected: AgentSettings.keys, path: path)
      }
    }
    return settings
  }

  /// The settings of one `[types.ID]` table.
  private static func settings(_ table: TOMLTable, id: String, path: String) throws -> AccountTypeSettings {
    var settings = AccountTypeSettings()
    let header = "[types.\(TOMLTable.displayKey(id))]"
    for key in table.keys {
      guard let entry = table.entry(key) else { continue }
      let value = entry.value
      func expected(_ what: String) -> TokenKitError {
        problem(path, entry.valuePosition, "expected \(what) for \(key) in \(header), found \(value.kind)")
      }
      func string() throws -> String {
        guard let string = value.string else { throw expected("a string") }
        return string
      }
      switch key {
      case "client_id": settings.clientID = try string()
      case "client_secret": settings.clientSecret = try string()
      case "issuer": settings.issuer = try string()
      case "scopes":
        guard let array = value.array else { throw expected("an array of strings") }
        var scopes: [String] = []
        for element in array {
          guard let scope = element.string else {
            throw problem(
              path, entry.valuePosition, "expected strings in scopes in \(header), found \(element.kind)")
          }
          scopes.append(scope)
        }
        settings.scopes = scopes
      case "keep_fresh":
        guard let flag = value.boolean else { throw expected("true or false") }
        settings.keepFresh = flag
      case "authorization_parameters":
        guard let parameters = value.table else { throw expected("a table of strings") }
        var result: [String: String] = [:]
        for name in parameters.keys {
          guard let parameter = parameters.entry(name) else { continue }
          guard let string = parameter.value.string else {
            throw problem(
              path, parameter.valuePosition,
              "expected a string for \(TOMLTable.displayKey(name)) in authorization_parameters in \(header), found \(parameter.value.kind)"
            )
          }
          result[name] = string
        }
        settings.authorizationParameters = result
      case "redirect_port":
        guard let port = value.integer else { throw expected("an integer") }
        guard (1...65535).contains(port) else {
          throw problem(path, entry.valuePosition, "redirect_port in \(header) must be between 1 and 65535")
        }
        settings.redirectPort = UInt16(port)
      default:
        // A string under another name is the plugin's own setting, checked against what
        // the plugin declares when the settings are applied; a near-miss of a common key
        // is a typo, and said so here, where the line is known.
        let typo = AccountTypeSettings.keys.contains { EditDistance.levenshtein(key, $0) <= 2 }
        guard !typo, let string = value.string else {
          throw unknownKey(key, at: entry.keyPosition, in: header, expected: AccountTypeSettings.keys, path: path)
        }
        settings.options[key] = string
      }
    }
    return settings
  }

  /// The `[NAME.accounts]` rules of a `[credentials]` or `[git]` table (`name`).
  private static func gitAccounts(_ git: TOMLTable, name: String, path: String) throws -> [String: String] {
    var rules: [String: String] = [:]
    for key in git.keys {
      guard let entry = git.entry(key) else { continue }
      guard key == "accounts" else {
        throw unknownKey(key, at: entry.keyPosition, in: "[\(name)]", expected: ["accounts"], path: path)
      }
      guard let accounts = entry.value.table else {
        throw problem(path, entry.valuePosition, "expected a table [\(name).accounts], found \(entry.value.kind)")
      }
      for prefix in accounts.keys {
        guard let rule = accounts.entry(prefix) else { continue }
        guard GitRemotePrefix(prefix) != nil else {
          throw problem(
            path, rule.keyPosition,
            "'\(TOMLTable.displayKey(prefix))' in [\(name).accounts] is not an http or https URL with a host, "
              + "such as \"https://github.com/acme/\"")
        }
        guard let account = rule.value.string, !account.isEmpty else {
          throw problem(
            path, rule.valuePosition,
            "expected an account such as \"github:ada\" for '\(TOMLTable.displayKey(prefix))' in [\(name).accounts]")
        }
        rules[prefix] = account
      }
    }
    return rules
  }

  /// An error for a key the configuration does not know, with the likely intended one.
  private static func unknownKey(
    _ key: String, at position: TOMLPosition, in header: String?, expected: [String], path: String
  ) -> TokenKitError {
    let place = header.map { " in \($0)" } ?? ""
    var message = "unknown key '\(TOMLTable.displayKey(key))'\(place)"
    if let guess = EditDistance.closest(to: key, among: expected) { message += "; did you mean '\(guess)'?" }
    return TokenKitError(
      .notConfigured, "\(path):\(position): \(message)",
      recovery: "Known keys\(place): \(expected.joined(separator: ", ")).")
  }

  private static func problem(_ path: String, _ position: TOMLPosition, _ message: String) -> TokenKitError {
    TokenKitError(.notConfigured, "\(path):\(position): \(message)")
  }
}
