import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The messages of version 1 (tokenctl-agent(1) lists them): what each kind carries, in
/// one place for the agent that writes them and the client that reads them.
extension AgentMessage {
  /// Request kinds.
  public enum Request {
    /// `group`, `account`, optional `min-valid` (seconds), optional `scopes` (a token for
    /// these scopes instead of the account's own, as `scope` is written: RFC 6749 §3.3);
    /// answered `token` or `error`.
    public static let token = "token"
    /// `group`, `input` (git's request, as git sent it), optional `account`
    /// (`TOKENCTL_ACCOUNT`); answered `credential` or `error`.
    public static let credentialGet = "credential-get"
    /// `group`, optional `type`; answered `accounts` or `error`.
    public static let list = "list"
    /// Answered `status`.
    public static let status = "status"
  }

  /// Answer kinds.
  public enum Answer {
    /// `access-token`, then `warning`s; and for a request with `scopes`, those `scopes`
    /// again, so that a client knows the agent heard them (an agent older than them does
    /// not echo them, and answered with the account's own token). `expires` (seconds since
    /// 1970, when known) and `token-scopes` describe the token, for `token --json`.
    public static let token = "token"
    /// An optional `answer` (git's response, serialized), then `warning`s.
    public static let credential = "credential"
    /// Account records, each starting at `type` (``accountRecords``).
    public static let accounts = "accounts"
    /// A `TokenKitError`: `code`, `message`, optional `recovery` and `remedy` (JSON).
    public static let error = "error"
    /// The agent will not answer this one; the client does it itself, as without an
    /// agent. `reason` says why, for the log.
    public static let direct = "direct"
    public static let status = "status"
    /// No fields: the answer is coming but slowly (the agent is refreshing). Sent before
    /// the answer, only to a request with `progress` 1 (``progressField``).
    public static let working = "working"
  }

  /// The field of a request whose client reads a `working` frame before its answer: it
  /// waits only a short while for a first frame, so that a wedged agent costs it little.
  public static let progressField = "progress"

  /// The environment variables that decide which files, directories and keyring a request
  /// means. A client sends its values as `env-NAME` fields (absent: unset); the agent
  /// answers as if it ran with them, and leaves a request whose session bus is not its
  /// own to the client.
  public static let contextVariables = [
    "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "TOKENCTL_CONFIG",
    "DBUS_SESSION_BUS_ADDRESS",
  ]

  /// The field carrying the context variable `name`.
  ///
  /// Byte by byte, for the ASCII names above: `lowercased()` and `replacing` would page in
  /// Unicode case tables and the regex engine's searchers in every client.
  public static func contextField(_ name: String) -> String {
    var field = Array("env-".utf8)
    for byte in name.utf8 {
      switch byte {
      case UInt8(ascii: "_"): field.append(UInt8(ascii: "-"))
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): field.append(byte + 32)
      default: field.append(byte)
      }
    }
    return String(decoding: field, as: UTF8.self)
  }

  /// The context variables a request carries.
  public var context: [String: String] {
    var context: [String: String] = [:]
    for name in Self.contextVariables {
      if let value = self[Self.contextField(name)] { context[name] = value }
    }
    return context
  }

  // MARK: Errors

  /// An `error` answer carrying `error` whole.
  public init(error: TokenKitError) {
    self.init(Answer.error, [Field("code", error.code.description), Field("message", error.message)])
    if let recovery = error.recovery { append("recovery", recovery) }
    if let remedy = error.remedy, let json = try? JSONEncoder().encode(remedy) {
      append("remedy", String(decoding: json, as: UTF8.self))
    }
  }

  /// The error an `error` answer carries; nil for one that is not well formed.
  public var error: TokenKitError? {
    guard kind == Answer.error, let name = self["code"], let code = TokenKitError.Code(name: name),
      let message = self["message"]
    else { return nil }
    let remedy = self["remedy"].flatMap { try? JSONDecoder().decode(TokenKitError.Remedy.self, from: Data($0.utf8)) }
    return TokenKitError(code, message, recovery: self["recovery"], remedy: remedy)
  }

  // MARK: Accounts

  /// An `accounts` answer listing `listings`, in order.
  public init(listings: [AccountListing]) {
    self.init(Answer.accounts)
    for listing in listings { appendRecord(listing) }
  }

  /// Appends one account record: `type` first, then the account's fields and its tokens'
  /// summary. Dates are seconds since 2001 as Swift prints a `Double`: exact both ways.
  public mutating func appendRecord(_ listing: AccountListing) {
    let account = listing.account
    append("type", account.type)
    append("id", account.id)
    append("name", account.name)
    append("group", account.group)
    append("scopes", account.scopes.joined(separator: " "))
    append("created", "\(account.createdAt.timeIntervalSinceReferenceDate)")
    append("updated", "\(account.updatedAt.timeIntervalSinceReferenceDate)")
    if let issuer = account.issuer { append("issuer", issuer) }
    if let clientID = account.clientID { append("client-id", clientID) }
    if let authority = account.authority { append("authority", authority) }
    append("needs-sign-in", account.needsSignIn ? "1" : "0")
    if account.isServiceAccount { append("service-account", "1") }
    if let expiresAt = listing.tokens.expiresAt { append("expires", "\(expiresAt.timeIntervalSinceReferenceDate)") }
    append("refreshable", listing.tokens.refreshable ? "1" : "0")
  }

  /// The account records, in order; nil when one is malformed.
  public var accountRecords: [AccountListing]? {
    var records: [AccountListing] = []
    var index = fields.startIndex
    while index < fields.endIndex {
      guard fields[index].key == "type" else { return nil }
      var end = fields.index(after: index)
      while end < fields.endIndex, fields[end].key != "type" { end += 1 }
      guard let record = Self.record(AgentMessage(kind, Array(fields[index..<end]))) else { return nil }
      records.append(record)
      index = end
    }
    return records
  }

  private static func record(_ fields: AgentMessage) -> AccountListing? {
    func date(_ key: String) -> Date? {
      fields[key].flatMap(Double.init).map(Date.init(timeIntervalSinceReferenceDate:))
    }
    guard let type = fields["type"], let id = fields["id"], let name = fields["name"], let group = fields["group"],
      let scopes = fields["scopes"], let created = date("created"), let updated = date("updated"),
      let needsSignIn = fields["needs-sign-in"], let refreshable = fields["refreshable"]
    else { return nil }
    let account = Account(
      type: type, id: id, name: name, group: group,
      scopes: scopes.split(separator: " ").map(String.init), createdAt: created, updatedAt: updated,
      issuer: fields["issuer"], clientID: fields["client-id"], needsSignIn: needsSignIn == "1",
      isServiceAccount: fields["service-account"] == "1", authority: fields["authority"])
    return AccountListing(
      account: account, tokens: TokenSummary(expiresAt: date("expires"), refreshable: refreshable == "1"))
  }
}
