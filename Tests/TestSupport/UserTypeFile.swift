import Foundation

/// An account type of the user's own (tokenctl-types(5)) as the tests write one: the
/// settings most of them give, and any further TOML as text, in the folder where tokenctl
/// reads a config home's types (`CONFIG_HOME/tokenctl/types/ID.toml`, mode 0600, as a
/// user's own file is).
public struct UserTypeFile: Sendable {
  public var id: String
  public var displayName: String
  public var issuer: String?
  public var clientID: String?
  public var scopes: [String]
  /// Top-level settings and tables of the test's own, written after the settings above.
  public var more: String
  /// The loopback redirect the tests' authorization servers register (`[redirect]`).
  public var loopbackRedirect: Bool
  /// `[git]`'s hosts (none: no `[git]` table), the username git is given, and whether
  /// the token goes as a bearer token.
  public var gitHosts: [String]
  public var gitUsername: String
  public var gitBearer: Bool

  public init(
    id: String, displayName: String, issuer: String? = nil, clientID: String? = nil, scopes: [String] = [],
    more: String = "", loopbackRedirect: Bool = false, gitHosts: [String] = [], gitUsername: String = "oauth2",
    gitBearer: Bool = false
  ) {
    self.id = id
    self.displayName = displayName
    self.issuer = issuer
    self.clientID = clientID
    self.scopes = scopes
    self.more = more
    self.loopbackRedirect = loopbackRedirect
    self.gitHosts = gitHosts
    self.gitUsername = gitUsername
    self.gitBearer = gitBearer
  }

  /// The file's TOML.
  public var text: String {
    let strings = { (values: [String]) in "[" + values.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
    var lines = ["id = \"\(id)\"", "display_name = \"\(displayName)\""]
    if let issuer { lines.append("issuer = \"\(issuer)\"") }
    if let clientID { lines.append("client_id = \"\(clientID)\"") }
    if !scopes.isEmpty { lines.append("scopes = \(strings(scopes))") }
    if !more.isEmpty { lines += ["", more] }
    if loopbackRedirect { lines += ["", "[redirect]", "host = \"127.0.0.1\"", "path = \"/callback\""] }
    if !gitHosts.isEmpty {
      lines += ["", "[git]", "hosts = \(strings(gitHosts))", "username = \"\(gitUsername)\""]
      if gitBearer { lines.append("bearer = true") }
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// Writes the file in `configHome/tokenctl/types`, made if missing; returns its URL.
  @discardableResult
  public func write(configHome: URL) throws -> URL {
    let types = configHome.appendingPathComponent("tokenctl/types")
    try FileManager.default.createDirectory(at: types, withIntermediateDirectories: true)
    let file = types.appendingPathComponent("\(id).toml")
    try text.write(to: file, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
    return file
  }
}
