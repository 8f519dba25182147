/// One finding of `tokenctl doctor`: what was checked, how it went, and for a warning or a
/// failure, the fix (a command to run or a line to add).
struct DoctorCheck: Encodable, Sendable, Hashable {
  enum Status: String, Encodable, Sendable, Hashable, Comparable {
    /// Nothing to do.
    case ok
    /// Works, or may, but something is likely to get in the way: worth a look.
    case warn
    /// Stands between the user and a token: the command exits non-zero.
    case fail

    private var rank: Int {
      switch self {
      case .ok: 0
      case .warn: 1
      case .fail: 2
      }
    }

    static func < (lhs: Status, rhs: Status) -> Bool { lhs.rank < rhs.rank }
  }

  /// Stable, for scripts: `session-bus`, `client-id:graph`, `git:https://github.com`.
  var id: String
  /// What was checked, for people.
  var title: String
  var status: Status
  /// What was found.
  var detail: String
  /// What to do about it; nil when the status is ok.
  var fix: String?

  static func ok(_ id: String, _ title: String, _ detail: String) -> DoctorCheck {
    DoctorCheck(id: id, title: title, status: .ok, detail: detail, fix: nil)
  }

  static func warn(_ id: String, _ title: String, _ detail: String, fix: String) -> DoctorCheck {
    DoctorCheck(id: id, title: title, status: .warn, detail: detail, fix: fix)
  }

  static func fail(_ id: String, _ title: String, _ detail: String, fix: String) -> DoctorCheck {
    DoctorCheck(id: id, title: title, status: .fail, detail: detail, fix: fix)
  }

  // `fix` is always present in the JSON document, null when there is none, so that a
  // script can read it without asking first.
  private enum CodingKeys: String, CodingKey { case id, title, status, detail, fix }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(id, forKey: .id)
    try container.encode(title, forKey: .title)
    try container.encode(status, forKey: .status)
    try container.encode(detail, forKey: .detail)
    try container.encode(fix, forKey: .fix)
  }
}
