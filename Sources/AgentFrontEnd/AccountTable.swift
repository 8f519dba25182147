#if !hasFeature(Embedded)
  // Embedded, the front end is one module of these sources (Sources/tokenctl-front-end).
  import AgentWire
#endif

/// `tokenctl list` (no options) printed by the front end from the agent's `accounts`
/// answer, byte for byte as the full program prints the same answer (`TokenCtl.List`: its
/// `Table`, `Style`, `AccountStatusText` and the core's `DurationText`); a test runs both
/// on the same accounts and compares.
///
/// Only an answer the front end can be sure of is printed: well-formed records with no
/// warning to pass on, whose type, name and group are printable ASCII. For those the full
/// program's escaping of control characters (`TerminalSafe`) changes nothing and a
/// character takes one column; any other text, and `--json`, are the full program's.
public struct AccountTable: Sendable, Equatable {
  /// One account's row: what the table shows of its record (``AgentMessage/appendRecord``
  /// in AgentProtocol writes them).
  public struct Row: Sendable, Equatable {
    public var type: String
    public var name: String
    public var group: String
    public var needsSignIn: Bool
    public var serviceAccount: Bool
    public var refreshable: Bool
    /// The access token's expiry, in nanoseconds since 2001-01-01 (the record's `expires`);
    /// nil when it has none.
    public var expires: Int64?
  }

  public var rows: [Row]

  /// The records of `answer`; nil unless it is an `accounts` answer the front end can
  /// print as the full program would.
  public init?(_ answer: AgentMessage) {
    guard answer.kind == AgentMessage.Answer.accounts, answer.values("warning").isEmpty,
      answer.values("type-warning").isEmpty
    else { return nil }
    var rows: [Row] = []
    var start = 0
    let fields = answer.fields
    while start < fields.count {
      // A record starts at its `type` (``AgentMessage/accountRecords``).
      guard fields[start].key == "type" else { return nil }
      var end = start + 1
      while end < fields.count, fields[end].key != "type" { end += 1 }
      guard let row = Self.row(fields[start..<end]) else { return nil }
      rows.append(row)
      start = end
    }
    self.rows = rows
  }

  private static func row(_ fields: ArraySlice<AgentMessage.Field>) -> Row? {
    func value(_ key: String) -> String? { fields.first { $0.key == key }?.value }
    guard let type = value("type"), let name = value("name"), let group = value("group"),
      value("id") != nil, value("scopes") != nil,
      let created = value("created"), let updated = value("updated"),
      let needsSignIn = value("needs-sign-in"), let refreshable = value("refreshable"),
      nanoseconds(created) != nil, nanoseconds(updated) != nil,
      isPlain(type), isPlain(name), isPlain(group)
    else { return nil }
    var expires: Int64?
    if let text = value("expires") {
      guard let parsed = nanoseconds(text) else { return nil }
      expires = parsed
    }
    return Row(
      type: type, name: name, group: group, needsSignIn: needsSignIn == "1",
      serviceAccount: value("service-account") == "1", refreshable: refreshable == "1", expires: expires)
  }

  /// Printable ASCII: shown as it is, one column a character.
  private static func isPlain(_ text: String) -> Bool {
    text.utf8.allSatisfy { (0x20...0x7E).contains($0) }
  }

  /// A date of a record (seconds since 2001 as Swift prints a `Double`: `786931200.0`,
  /// `-12.5`) in nanoseconds, the digits past the ninth dropped; nil for any other form
  /// (an exponent, say), which the full program reads with `Double(_:)`, and past the
  /// year 2286, whose nanoseconds an `Int64` does not hold.
  static func nanoseconds(_ text: String) -> Int64? {
    var bytes = Array(text.utf8)[...]
    let negative = bytes.first == UInt8(ascii: "-")
    if negative { bytes = bytes.dropFirst() }
    let point = bytes.firstIndex(of: UInt8(ascii: ".")) ?? bytes.endIndex
    let whole = bytes[..<point]
    let fraction = point < bytes.endIndex ? bytes[(point + 1)...] : []
    let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
    guard !whole.isEmpty, whole.count <= 10, whole.allSatisfy(isDigit), fraction.allSatisfy(isDigit),
      point == bytes.endIndex || !fraction.isEmpty
    else { return nil }
    var value: Int64 = 0
    for byte in whole { value = value * 10 + Int64(byte - UInt8(ascii: "0")) }
    guard value <= 9_000_000_000 else { return nil }
    var nanos: Int64 = 0
    for (index, byte) in fraction.prefix(9).enumerated() {
      var digit = Int64(byte - UInt8(ascii: "0"))
      for _ in index..<8 { digit *= 10 }
      nanos += digit
    }
    let total = value * 1_000_000_000 + nanos
    return negative ? -total : total
  }

  /// Seconds from 1970 to 2001, the records' epoch.
  static let referenceDateSince1970: Int64 = 978_307_200

  /// The table as the full program prints it at `now` (nanoseconds since 1970), `styled`
  /// when standard output is a terminal and `NO_COLOR` is unset or empty (`Style`).
  public func rendered(now: Int64, styled: Bool) -> String {
    let now2001 = now - Self.referenceDateSince1970 * 1_000_000_000
    let header = ["TYPE", "ACCOUNT", "GROUP", "STATUS"]
    var cells: [[String]] = []
    var usable: [Bool] = []
    for row in rows {
      let status = Self.status(row, now: now2001)
      cells.append([row.type, row.name, row.group, status.text])
      usable.append(status.usable)
    }
    var widths = header.map { $0.utf8.count }
    for line in cells {
      for column in 0..<widths.count { widths[column] = max(widths[column], line[column].utf8.count) }
    }
    func line(_ texts: [String], _ decorate: (Int, String) -> String) -> String {
      var out = ""
      for (column, text) in texts.enumerated() {
        out += decorate(column, text)
        if column < texts.count - 1 {
          out += String(repeating: " ", count: widths[column] - text.utf8.count + 2)
        }
      }
      return out + "\n"
    }
    func style(_ text: String, _ code: String) -> String { styled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
    var out = line(header) { style($1, "1") }
    for (index, texts) in cells.enumerated() {
      out += line(texts) { column, text in column == 3 ? style(text, usable[index] ? "32" : "33") : text }
    }
    return out
  }

  /// The STATUS column (`AccountStatusText`), `now` in nanoseconds since 2001.
  static func status(_ row: Row, now: Int64) -> (text: String, usable: Bool) {
    let renewable = row.refreshable || row.serviceAccount
    let refresh = row.serviceAccount ? "renews itself" : renewable ? "refreshable" : "needs sign-in when expired"
    if row.needsSignIn { return ("needs sign-in (refresh token rejected)", false) }
    guard let expires = row.expires else { return ("valid (no expiry), \(refresh)", true) }
    let remaining = expires - now
    guard remaining > 0 else { return (renewable ? "expired, \(refresh)" : "expired, needs sign-in", false) }
    return ("valid for \(duration(seconds: Int(remaining / 1_000_000_000))), \(refresh)", true)
  }

  /// The core's `DurationText.format(seconds:)`.
  static func duration(seconds: Int) -> String {
    let seconds = max(0, seconds)
    switch seconds {
    case ..<60: return "\(seconds) s"
    case ..<3600: return "\(seconds / 60) min"
    case ..<86_400:
      let minutes = seconds % 3600 / 60
      return minutes == 0 ? "\(seconds / 3600) h" : "\(seconds / 3600) h \(minutes) min"
    default:
      let hours = seconds % 86_400 / 3600
      return hours == 0 ? "\(seconds / 86_400) d" : "\(seconds / 86_400) d \(hours) h"
    }
  }

  /// What the full program writes to standard error for a group with no account.
  public static func noAccounts(group: String) -> String {
    "No accounts in group '\(group)'.\n"
      + "hint: Run `tokenctl types` to see the account types, then `tokenctl login` with one of them.\n"
  }
}
