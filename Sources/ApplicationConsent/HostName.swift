/// The name of a host the agent is forwarded to, as consent names it: the host name ssh
/// connects to (`ssh -G DESTINATION`'s `hostname`), so that `ssh build1`, `ssh me@build1`
/// and an alias in `~/.ssh/config` whose `HostName` is build1 are one host.
///
/// A DNS name or an address, lowercased as ssh prints it: letters, digits and `.-_:`
/// (`:` for IPv6), at most 253 bytes. Nothing else: the name is shown in notifications,
/// tables and the audit log, and must read as what it is.
public struct HostName: Sendable, Hashable, CustomStringConvertible {
  public let rawValue: String

  /// The longest DNS name (RFC 1035 §2.3.4, without the final dot).
  static let maximumLength = 253

  /// `name` lowercased, or nil when it is empty, too long, or holds anything else.
  public init?(_ name: String) {
    let lowered = String(decoding: name.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
    guard !lowered.isEmpty, lowered.utf8.count <= Self.maximumLength,
      lowered.utf8.allSatisfy({ byte in
        (byte >= 97 && byte <= 122) || (byte >= 48 && byte <= 57) || byte == 46 || byte == 45 || byte == 95
          || byte == 58
      }),
      lowered.first != "-", lowered.first != "."
    else { return nil }
    rawValue = lowered
  }

  public var description: String { rawValue }
}
