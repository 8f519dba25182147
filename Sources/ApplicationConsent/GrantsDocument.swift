import NativeAppSupport
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// grants.json as it is stored: `{"version": 1, "grants": [...]}`, dates in RFC 3339.
///
/// A document that is not exactly this shape is refused whole rather than read in part:
/// half a grants file could allow what the user never allowed.
struct GrantsDocument: Codable {
  /// Bumped only when a field changes meaning; an older tokenctl then refuses the file
  /// instead of misreading it.
  static let currentVersion = 1

  struct Entry: Codable {
    var application: String
    var group: String?
    var state: String
    var accounts: [Account]?
    var since: Date
    var lastUse: Date?

    enum CodingKeys: String, CodingKey {
      case application, group, state, accounts, since
      case lastUse = "last_use"
    }
  }

  struct Account: Codable {
    var type: String
    var id: String
    var name: String
  }

  var version: Int
  var grants: [Entry]

  init(_ grants: [Grant]) {
    version = Self.currentVersion
    self.grants = grants.map { grant in
      var accounts: [Account]?
      if case .allowed(let granted?) = grant.state {
        accounts = granted.map { Account(type: $0.key.type, id: $0.key.id, name: $0.name) }
      }
      return Entry(
        application: grant.application, group: grant.group,
        state: grant.state == .denied ? "denied" : "allowed", accounts: accounts, since: grant.since,
        lastUse: grant.lastUse)
    }
  }

  func encoded() -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    // Strings, dates and arrays only: encoding cannot fail.
    return Array(try! encoder.encode(self)) + [0x0A]
  }

  /// The grants in `bytes`, or a description of what is wrong with them (never a value
  /// from the file beyond a version number: it is the user's, but may be anyone's).
  static func decode(_ bytes: [UInt8]) -> Result<[Grant], DecodeFailure> {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    let document: GrantsDocument
    do {
      // The version first, so that a newer file is named as such rather than as damaged.
      struct Versioned: Decodable { var version: Int }
      let version = try decoder.decode(Versioned.self, from: Data(bytes)).version
      guard version == currentVersion else {
        return .failure(DecodeFailure("it has version \(version), from another tokenctl"))
      }
      document = try decoder.decode(GrantsDocument.self, from: Data(bytes))
    } catch {
      return .failure(
        DecodeFailure("it is not a grants file (JSON with \"version\": \(currentVersion) and \"grants\")"))
    }
    var grants: [Grant] = []
    var seen = Set<String>()
    for (index, entry) in document.grants.enumerated() {
      func bad(_ why: String) -> Result<[Grant], DecodeFailure> { .failure(DecodeFailure("grant \(index + 1) \(why)")) }
      guard ApplicationIdentity(name: entry.application) != nil else {
        return bad("names no application (an absolute path, flatpak: and an app id, or host: and a host name)")
      }
      guard entry.group.map({ !$0.isEmpty }) ?? true else { return bad("has an empty group") }
      guard seen.insert(entry.application + "\u{0}" + (entry.group ?? "\u{0}")).inserted else {
        return bad("repeats an application and group")
      }
      let state: Grant.State
      switch entry.state {
      case "allowed":
        guard entry.group != nil else { return bad("allows every group, which only a denial may") }
        state = .allowed(
          entry.accounts.map { $0.map { GrantedAccount(key: AccountKey(type: $0.type, id: $0.id), name: $0.name) } })
      case "denied":
        guard entry.accounts == nil else { return bad("denies and names accounts") }
        state = .denied
      default: return bad("has the unknown state '\(ServerText.escaped(entry.state))'")
      }
      grants.append(
        Grant(
          application: entry.application, group: entry.group, state: state, since: entry.since,
          lastUse: entry.lastUse))
    }
    return .success(grants)
  }

  struct DecodeFailure: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
  }
}
