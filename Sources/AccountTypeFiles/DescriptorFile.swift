import TOMLReader
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An account type defined in a TOML file, so that users can add a service without
/// recompiling: one file, one ``EndpointDescriptor``.
///
/// The keys follow RFC 8414 and RFC 7591 where those name the field, and tokenctl-types(5)
/// documents them. Parsing is pure: bytes in, a descriptor or every problem found out.
/// File permissions, directories and duplicate ids are the caller's business.
///
/// ```toml
/// id = "corp"
/// display_name = "Corp single sign-on"
/// issuer = "https://id.example.org/realms/staff"
/// client_id = "tokenctl"
/// scopes = ["openid", "email", "offline_access"]
/// ```
public enum DescriptorFile {
  /// The top-level keys, in the order tokenctl-types(5) lists them.
  public static let keys = [
    "id", "display_name", "issuer", "endpoints", "scopes", "client_id", "client_secret",
    "token_endpoint_auth_method", "redirect", "authorization_parameters", "api_base", "credentials", "git",
    "device_grant_error_aliases", "refresh_token_idle_lifetime", "registration", "registration_metadata",
  ]
  static let endpointKeys = [
    "authorization", "token", "device_authorization", "revocation", "userinfo", "jwks", "issuer",
  ]
  static let redirectKeys = ["host", "port", "path", "paste"]
  /// The client metadata members tokenctl registers itself (RFC 7591 §2).
  static let registrationMembers = [
    "redirect_uris", "token_endpoint_auth_method", "grant_types", "response_types", "client_name", "application_type",
  ]
  static let gitKeys = ["hosts", "username", "bearer"]
  /// The names of the table of the hosts a type's tokens are for, whatever the tool asks
  /// (git, Docker, cargo, kubectl, Python's keyring): `[credentials]`, and `[git]`, its name
  /// from when git was its only reader, which every file written then still uses.
  public static let credentialsTables = ["credentials", "git"]

  /// Authorization request parameters that tokenctl sets itself (RFC 6749 §4.1.1, RFC 7636
  /// §4.3, OpenID Connect Core §3.1.2.1). Letting a file set them would let it undo PKCE,
  /// the state check or the redirect, so they are refused, as is any `code_` parameter.
  public static let protocolParameters: Set<String> = [
    "response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge",
    "code_challenge_method", "nonce",
  ]

  /// The device-grant errors of RFC 8628 §3.5 that a provider's own error may stand for.
  static let deviceGrantErrors: Set<String> = ["authorization_pending", "slow_down", "access_denied", "expired_token"]

  /// Parses one descriptor file; `source` names it in messages (`corp.toml:4:9: …`).
  ///
  /// - Throws: ``DescriptorFileError`` with every problem found, in file order.
  public static func parse(_ bytes: [UInt8], source: String) throws(DescriptorFileError) -> EndpointDescriptor {
    let table: TOMLTable
    do {
      table = try TOMLParser.parse(bytes, source: source)
    } catch {
      // The parser's message already reads `source:line:column: …`.
      throw DescriptorFileError(problems: [error.message])
    }
    var reader = Reader(source: source)
    let descriptor = reader.descriptor(table)
    guard let descriptor, reader.problems.isEmpty else {
      throw DescriptorFileError(problems: reader.formattedProblems)
    }
    return descriptor
  }

  /// Walks the table, collecting problems instead of stopping at the first, so that
  /// `tokenctl types --check` can list them all.
  struct Reader {
    let source: String
    var problems: [(position: TOMLPosition?, message: String)] = []

    init(source: String) { self.source = source }

    var formattedProblems: [String] {
      // Stable: Swift's sort is not, so the index breaks ties between equal positions.
      let ordered = problems.enumerated().sorted { lhs, rhs in
        let left = lhs.element.position ?? TOMLPosition(line: .max, column: .max)
        let right = rhs.element.position ?? TOMLPosition(line: .max, column: .max)
        return left == right ? lhs.offset < rhs.offset : left < right
      }
      return ordered.map { _, problem in
        problem.position.map { "\(source):\($0): \(problem.message)" } ?? "\(source): \(problem.message)"
      }
    }

    mutating func report(_ message: String, at position: TOMLPosition?) {
      problems.append((position, message))
    }

    mutating func descriptor(_ table: TOMLTable) -> EndpointDescriptor? {
      for key in table.keys where !DescriptorFile.keys.contains(key) {
        unknownKey(key, at: table.entry(key)?.keyPosition, in: nil, expected: DescriptorFile.keys)
      }
      let id = identifier(table)
      let displayName = string("display_name", in: table) ?? id
      let endpoints = endpointConfiguration(table)
      let scopes = scopeList(table)
      let clientID = printableASCII("client_id", in: table, rfc: "RFC 6749 Appendix A.1")
      let clientSecret = printableASCII("client_secret", in: table, rfc: "RFC 6749 Appendix A.2")
      let authentication = authenticationMethod(table, hasSecret: clientSecret != nil)
      let redirect = redirectPolicy(table)
      let parameters = authorizationParameters(table)
      let apiBase = url("api_base", in: table)
      let git = gitIntegration(table)
      let aliases = errorAliases(table)
      let idleLifetime = positiveSeconds("refresh_token_idle_lifetime", in: table)
      let registration = boolean("registration", in: table)
      let registrationMetadata = self.registrationMetadata(table)
      guard let id, let endpoints else { return nil }
      var descriptor = EndpointDescriptor(
        id: id, displayName: displayName ?? id, endpoints: endpoints, defaultScopes: scopes,
        clientID: clientID, clientSecret: clientSecret, redirect: redirect,
        tokenEndpointAuthentication: authentication, additionalAuthorizationParameters: parameters, git: git,
        deviceGrantErrorAliases: aliases, apiBase: apiBase)
      descriptor.refreshTokenIdleLifetime = idleLifetime
      descriptor.dynamicRegistration = registration ?? false
      descriptor.additionalRegistrationMetadata = registrationMetadata
      if registration == true, case .fixed = endpoints {
        report("registration = true needs an issuer to discover the registration endpoint from", at: nil)
      }
      // Whatever the checks above missed, the registry would refuse later; say it now.
      if problems.isEmpty {
        for problem in descriptor.problems { report(problem, at: nil) }
      }
      return descriptor
    }

    // MARK: - Top-level fields

    private mutating func identifier(_ table: TOMLTable) -> String? {
      guard table.entry("id") != nil else {
        report("missing key 'id': the account type's id, such as id = \"corp\"", at: nil)
        return nil
      }
      guard let id = string("id", in: table) else { return nil }
      guard EndpointDescriptor.isValidID(id) else {
        report(
          "id \(TOMLValue.quoted(id)) must be lowercase letters, digits and '-', not starting with '-'",
          at: table.entry("id")?.valuePosition)
        return nil
      }
      return id
    }

    private mutating func endpointConfiguration(_ table: TOMLTable) -> EndpointConfiguration? {
      let issuerEntry = table.entry("issuer")
      let endpointsEntry = table.entry("endpoints")
      switch (issuerEntry, endpointsEntry) {
      case (nil, nil):
        report("missing key 'issuer' (endpoints discovered) or table [endpoints]", at: nil)
        return nil
      case (.some, .some(let entry)):
        report("give either issuer or [endpoints], not both", at: entry.keyPosition)
        return nil
      case (.some, nil):
        guard let issuer = issuerURL("issuer", in: table) else { return nil }
        return .discovered(issuer: issuer)
      case (nil, .some(let entry)):
        guard let endpoints = subtable("endpoints", entry) else { return nil }
        for key in endpoints.keys where !DescriptorFile.endpointKeys.contains(key) {
          unknownKey(
            key, at: endpoints.entry(key)?.keyPosition, in: "[endpoints]", expected: DescriptorFile.endpointKeys)
        }
        for required in ["authorization", "token"] where endpoints.entry(required) == nil {
          report("missing key '\(required)' in [endpoints]", at: entry.keyPosition)
        }
        let authorization = url("authorization", in: endpoints)
        let token = url("token", in: endpoints)
        let device = url("device_authorization", in: endpoints)
        let revocation = url("revocation", in: endpoints)
        let userinfo = url("userinfo", in: endpoints)
        let jwks = url("jwks", in: endpoints)
        let issuer = issuerURL("issuer", in: endpoints)
        guard let authorization, let token else { return nil }
        return .fixed(
          Endpoints(
            authorization: authorization, token: token, deviceAuthorization: device, revocation: revocation,
            userinfo: userinfo, jwks: jwks, issuer: issuer?.absoluteString))
      }
    }

    private mutating func scopeList(_ table: TOMLTable) -> [String] {
      guard let entry = table.entry("scopes") else { return [] }
      guard let array = entry.value.array else {
        report("expected an array of strings for scopes, found \(entry.value.kind)", at: entry.valuePosition)
        return []
      }
      var scopes: [String] = []
      for element in array {
        guard let scope = element.string else {
          report("expected strings in scopes, found \(element.kind)", at: entry.valuePosition)
          continue
        }
        // RFC 6749 §3.3: scope-token = 1*NQCHAR, printable ASCII without space, '"' and '\'.
        guard OAuthSyntax.isScopeToken(scope) else {
          report(
            "scope \(TOMLValue.quoted(scope)) is not a scope token: printable ASCII without spaces, '\"' or '\\' (RFC 6749 §3.3)",
            at: entry.valuePosition)
          continue
        }
        scopes.append(scope)
      }
      return scopes
    }

    private mutating func authenticationMethod(_ table: TOMLTable, hasSecret: Bool) -> ClientAuthenticationMethod {
      // RFC 7591 §2: without a stated method, a client with a secret uses HTTP Basic.
      let fallback: ClientAuthenticationMethod = hasSecret ? .clientSecretBasic : .none
      guard let entry = table.entry("token_endpoint_auth_method") else { return fallback }
      guard let text = string("token_endpoint_auth_method", in: table) else { return fallback }
      guard let method = ClientAuthenticationMethod(rawValue: text) else {
        let names = ClientAuthenticationMethod.allCases.map(\.rawValue).joined(separator: ", ")
        report(
          "token_endpoint_auth_method must be one of \(names), not \(TOMLValue.quoted(text))",
          at: entry.valuePosition)
        return fallback
      }
      if method == .none, hasSecret {
        report("token_endpoint_auth_method is none, so client_secret would never be sent", at: entry.valuePosition)
      }
      return method
    }

    private mutating func redirectPolicy(_ table: TOMLTable) -> RedirectPolicy {
      guard let entry = table.entry("redirect"), let redirect = subtable("redirect", entry) else {
        return .loopback()
      }
      for key in redirect.keys where !DescriptorFile.redirectKeys.contains(key) {
        unknownKey(key, at: redirect.entry(key)?.keyPosition, in: "[redirect]", expected: DescriptorFile.redirectKeys)
      }
      if let pasteEntry = redirect.entry("paste") {
        if let other = ["host", "port", "path"].first(where: { redirect.entry($0) != nil }) {
          report(
            "give either paste or a loopback redirect (host, port, path), not both",
            at: redirect.entry(other)?.keyPosition)
        }
        guard let uri = string("paste", in: redirect) else { return .loopback() }
        // An out-of-band URI (urn:ietf:wg:oauth:2.0:oob) or a provider's page that shows
        // the code: either way an absolute URI, sent verbatim as redirect_uri.
        guard let scheme = uri.split(separator: ":", maxSplits: 1).first, uri.contains(":"),
          scheme.first?.isLetter == true, uri.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
          report("paste must be an absolute URI such as \"urn:ietf:wg:oauth:2.0:oob\"", at: pasteEntry.valuePosition)
          return .loopback()
        }
        return .manualPaste(redirectURI: uri)
      }
      var host = "127.0.0.1"
      if let hostEntry = redirect.entry("host"), let text = string("host", in: redirect) {
        // RFC 8252 §8.3 prefers the IP literal; some providers only register localhost.
        if text == "127.0.0.1" || text == "localhost" {
          host = text
        } else {
          report("host must be \"127.0.0.1\" or \"localhost\" (RFC 8252 §7.3)", at: hostEntry.valuePosition)
        }
      }
      var port: UInt16?
      if let portEntry = redirect.entry("port") {
        if let number = portEntry.value.integer, (1...65535).contains(number) {
          port = UInt16(number)
        } else if portEntry.value.integer != nil {
          report("port must be between 1 and 65535", at: portEntry.valuePosition)
        } else {
          report("expected an integer for port, found \(portEntry.value.kind)", at: portEntry.valuePosition)
        }
      }
      var path = "/"
      if let pathEntry = redirect.entry("path"), let text = string("path", in: redirect) {
        if text.hasPrefix("/"), !text.contains("?"), !text.contains("#"),
          text.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        {
          path = text
        } else {
          report("path must start with '/' and have no spaces, query or fragment", at: pathEntry.valuePosition)
        }
      }
      return .loopback(host: host, port: port, path: path)
    }

    private mutating func authorizationParameters(_ table: TOMLTable) -> [String: String] {
      var result: [String: String] = [:]
      for (key, parameter) in entries(of: "authorization_parameters", in: table) {
        if DescriptorFile.protocolParameters.contains(key) || key.hasPrefix("code_") {
          let instead =
            switch key {
            case "scope": "; use scopes"
            case "client_id": "; use client_id"
            case "redirect_uri": "; use [redirect]"
            default: ""
            }
          report(
            "authorization_parameters must not set \(TOMLTable.displayKey(key)): tokenctl sets this protocol parameter itself\(instead)",
            at: parameter.keyPosition)
          continue
        }
        guard let value = parameter.value.string else {
          report(
            "expected a string for \(TOMLTable.displayKey(key)) in [authorization_parameters], found \(parameter.value.kind)",
            at: parameter.valuePosition)
          continue
        }
        result[key] = value
      }
      return result
    }

    /// `[registration_metadata]`: client metadata members (RFC 7591 §2) a server needs
    /// beyond the RFC's, as strings, integers, booleans or arrays of strings.
    private mutating func registrationMetadata(_ table: TOMLTable) -> [String: JSONValue] {
      var result: [String: JSONValue] = [:]
      for (key, member) in entries(of: "registration_metadata", in: table) {
        if DescriptorFile.registrationMembers.contains(key) {
          report(
            "registration_metadata must not set \(TOMLTable.displayKey(key)): tokenctl registers it itself",
            at: member.keyPosition)
          continue
        }
        switch member.value {
        case .string(let value): result[key] = .string(value)
        case .integer(let value): result[key] = .number(Double(value))
        case .boolean(let value): result[key] = .bool(value)
        case .array(let values) where values.allSatisfy({ $0.string != nil }):
          result[key] = .array(values.compactMap(\.string).map(JSONValue.string))
        default:
          report(
            "expected a string, integer, boolean or array of strings for \(TOMLTable.displayKey(key)) in [registration_metadata], found \(member.value.kind)",
            at: member.valuePosition)
        }
      }
      return result
    }

    private mutating func gitIntegration(_ table: TOMLTable) -> GitIntegration? {
      let named = DescriptorFile.credentialsTables.filter { table.entry($0) != nil }
      if named.count > 1 {
        report(
          "[credentials] and [git] are one table under two names: keep [credentials]",
          at: table.entry("git")?.keyPosition)
      }
      guard let name = named.first, let entry = table.entry(name), let git = subtable(name, entry) else { return nil }
      let header = "[\(name)]"
      for key in git.keys where !DescriptorFile.gitKeys.contains(key) {
        unknownKey(key, at: git.entry(key)?.keyPosition, in: header, expected: DescriptorFile.gitKeys)
      }
      var hosts: [String] = []
      if let hostsEntry = git.entry("hosts") {
        if let array = hostsEntry.value.array {
          for element in array {
            // A host name, as git's credential protocol sends it: no scheme, no path.
            guard let host = element.string, !host.isEmpty,
              host.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "/") })
            else {
              report("hosts must be host names such as \"git.example.org\"", at: hostsEntry.valuePosition)
              continue
            }
            hosts.append(host.lowercased())
          }
        } else {
          report("expected an array of strings for hosts, found \(hostsEntry.value.kind)", at: hostsEntry.valuePosition)
        }
      } else {
        report("missing key 'hosts' in \(header)", at: entry.keyPosition)
      }
      var username = GitUsername.accountName
      if git.entry("username") == nil {
        report("missing key 'username' in \(header): a fixed name, or \"account-name\"", at: entry.keyPosition)
      } else if let name = string("username", in: git) {
        username = name == "account-name" ? .accountName : .literal(name)
      }
      var bearer = false
      if let bearerEntry = git.entry("bearer") {
        if let value = bearerEntry.value.boolean {
          bearer = value
        } else {
          report("expected true or false for bearer", at: bearerEntry.valuePosition)
        }
      }
      return GitIntegration(hosts: hosts, username: username, bearer: bearer)
    }

    private mutating func errorAliases(_ table: TOMLTable) -> [String: String] {
      var result: [String: String] = [:]
      for (key, alias) in entries(of: "device_grant_error_aliases", in: table) {
        guard let value = alias.value.string, DescriptorFile.deviceGrantErrors.contains(value) else {
          let names = DescriptorFile.deviceGrantErrors.sorted().joined(separator: ", ")
          report(
            "\(TOMLTable.displayKey(key)) in [device_grant_error_aliases] must name an RFC 8628 §3.5 error: \(names)",
            at: alias.valuePosition)
          continue
        }
        result[key] = value
      }
      return result
    }

    // MARK: - Values

    /// The value at `key` as `read` takes it: nil when the key is absent, and nil with a
    /// problem saying what was `expected` when `read` does not take what is there.
    private mutating func value<Value>(
      _ key: String, in table: TOMLTable, expected: String, _ read: (TOMLValue) -> Value?
    ) -> Value? {
      guard let entry = table.entry(key) else { return nil }
      guard let value = read(entry.value) else {
        report("expected \(expected) for \(key), found \(entry.value.kind)", at: entry.valuePosition)
        return nil
      }
      return value
    }

    private mutating func boolean(_ key: String, in table: TOMLTable) -> Bool? {
      value(key, in: table, expected: "true or false") { $0.boolean }
    }

    private mutating func string(_ key: String, in table: TOMLTable) -> String? {
      value(key, in: table, expected: "a string") { $0.string }
    }

    /// A whole number of seconds, at least one.
    private mutating func positiveSeconds(_ key: String, in table: TOMLTable) -> Double? {
      value(key, in: table, expected: "a positive integer (seconds)") {
        $0.integer.flatMap { seconds in seconds > 0 ? Double(seconds) : nil }
      }
    }

    private mutating func printableASCII(_ key: String, in table: TOMLTable, rfc: String) -> String? {
      guard let text = string(key, in: table) else { return nil }
      guard OAuthSyntax.isVisibleASCII(text) else {
        report("\(key) must be non-empty printable ASCII (\(rfc))", at: table.entry(key)?.valuePosition)
        return nil
      }
      return text
    }

    /// An endpoint URL: https, or http on a loopback host (RFC 6749 §3.1, RFC 8252 §8.3).
    private mutating func url(_ key: String, in table: TOMLTable) -> URL? {
      guard let text = string(key, in: table) else { return nil }
      guard let url = OAuthSyntax.endpointURL(text) else {
        report(
          "\(key) must be an https URL (http only on a loopback host)", at: table.entry(key)?.valuePosition)
        return nil
      }
      return url
    }

    /// An issuer identifier: an endpoint URL without query or fragment (RFC 8414 §2).
    private mutating func issuerURL(_ key: String, in table: TOMLTable) -> URL? {
      let before = problems.count
      guard let url = url(key, in: table) else { return nil }
      guard OAuthSyntax.isIssuerShaped(url) else {
        if problems.count == before {
          report("\(key) must have no query or fragment (RFC 8414 §2)", at: table.entry(key)?.valuePosition)
        }
        return nil
      }
      return url
    }

    /// The entries of the table `[name]` in `table`, in order: none when there is no such
    /// key, and none, with a problem, when it is not a table.
    private mutating func entries(of name: String, in table: TOMLTable) -> [(key: String, entry: TOMLTable.Entry)] {
      guard let entry = table.entry(name), let members = subtable(name, entry) else { return [] }
      return members.keys.compactMap { key in members.entry(key).map { (key, $0) } }
    }

    private mutating func subtable(_ key: String, _ entry: TOMLTable.Entry) -> TOMLTable? {
      guard let table = entry.value.table else {
        report("expected a table [\(key)], found \(entry.value.kind)", at: entry.valuePosition)
        return nil
      }
      return table
    }

    private mutating func unknownKey(_ key: String, at position: TOMLPosition?, in header: String?, expected: [String])
    {
      let place = header.map { " in \($0)" } ?? ""
      var message = "unknown key '\(TOMLTable.displayKey(key))'\(place)"
      if let guess = EditDistance.closest(to: key, among: expected) { message += "; did you mean '\(guess)'?" }
      report(message, at: position)
    }
  }
}
