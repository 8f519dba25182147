@_exported import AgentWire
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The messages that carry the core's values (tokenctl-agent(1)): errors and account
/// records. Apart from the wire (``AgentMessage``), which the front end
/// (`tokenctl-front-end`) speaks without the core. Importing this imports the wire too.
extension AgentMessage {
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
