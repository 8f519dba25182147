#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// One line of the audit log: who got, or was refused, which account's token, and each
/// change of a grant. It has no field for a token, by design.
public struct AuditEvent: Sendable, Equatable {
  public enum Kind: String, Sendable, CaseIterable {
    /// A token was handed out.
    case token
    /// A request was refused.
    case refused
    /// An application was allowed (a grant made).
    case allowed
    /// An application was denied (grants removed).
    case denied
    /// The user was asked to decide (a consent prompt raised).
    case asked
  }

  /// How the request or the change arrived.
  public enum Channel: String, Sendable, CaseIterable {
    case dbus
    case socket
    case cli
    case notification
    /// The socket the agent opened for a host it is forwarded to (`tokenctl ssh`).
    case ssh
  }

  public var time: Date
  public var kind: Kind
  /// The application's name (the canonical executable path, `flatpak:APP_ID` or
  /// `host:NAME`), or the executable of a peer that could not be told.
  public var application: String
  /// The group; `*` for a denial in every group.
  public var group: String
  /// The qualified `TYPE:NAME`; nil when the event concerns no one account (a grant of
  /// every account, a refused listing).
  public var account: String?
  public var via: Channel
  /// Why, in a few words, for refusals mostly.
  public var reason: String?

  public init(
    time: Date, kind: Kind, application: String, group: String, account: String? = nil, via: Channel,
    reason: String? = nil
  ) {
    self.time = time
    self.kind = kind
    self.application = application
    self.group = group
    self.account = account
    self.via = via
    self.reason = reason
  }

  /// The event as one line without its newline:
  /// `2026-11-24T04:05:06Z token app=/usr/bin/python3.11 group=default account=github:ada via=dbus`.
  ///
  /// Every value is escaped (``escape(_:)``), so a name chosen by another program can
  /// neither end the line nor pose as another field.
  public var line: String {
    var fields = [
      Self.timestamp(time), kind.rawValue, "app=" + Self.escape(application), "group=" + Self.escape(group),
    ]
    if let account { fields.append("account=" + Self.escape(account)) }
    fields.append("via=" + via.rawValue)
    if let reason { fields.append("reason=" + Self.escape(reason)) }
    return fields.joined(separator: " ")
  }

  /// `value` with every byte outside printable ASCII, and the space, `%` and `=` that the
  /// format itself uses, written as `%XX` of its UTF-8 bytes, as in a URL. The result is
  /// plain ASCII, so no terminal or log reader can be fooled by it either.
  public static func escape(_ value: String) -> String {
    var result = ""
    for byte in value.utf8 {
      switch byte {
      case 0x21...0x7E where byte != UInt8(ascii: "%") && byte != UInt8(ascii: "="):
        result.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        let hex = String(byte, radix: 16, uppercase: true)
        result += "%" + (hex.count == 1 ? "0" + hex : hex)
      }
    }
    return result
  }

  /// RFC 3339 in UTC to the second.
  static func timestamp(_ date: Date) -> String {
    var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
      + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
  }
}
