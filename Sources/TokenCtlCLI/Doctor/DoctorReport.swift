/// What `tokenctl doctor` found: its `--json` document, `{format, checks, ok}`, and its
/// text, one check a line with its fix below.
struct DoctorReport: Encodable {
  let format = JSONOutput.formatVersion
  var checks: [DoctorCheck]
  /// Whether no check failed; warnings do not count.
  var ok: Bool

  init(checks: [DoctorCheck]) {
    self.checks = checks
    ok = !checks.contains { $0.status == .fail }
  }

  private enum CodingKeys: String, CodingKey { case format, checks, ok }

  /// `ok    Session bus: connected (…)`, the fix indented below a warning or failure, and
  /// a last line that counts them. Everything from files, the bus and servers is made
  /// safe for the terminal.
  func text(style: Style) -> String {
    var text = ""
    for check in checks {
      let word: String
      switch check.status {
      case .ok: word = style.green("ok  ")
      case .warn: word = style.yellow("warn")
      case .fail: word = style.red("fail")
      }
      let detail = lines(check.detail).joined(separator: "\n" + String(repeating: " ", count: 6))
      text += "\(word)  \(style.bold(check.title)): \(detail)\n"
      if let fix = check.fix {
        text += "      fix: " + lines(fix).joined(separator: "\n" + String(repeating: " ", count: 11)) + "\n"
      }
    }
    let failed = checks.filter { $0.status == .fail }.count
    let warned = checks.filter { $0.status == .warn }.count
    if failed == 0 && warned == 0 {
      text += "All \(checks.count) checks passed.\n"
    } else {
      let counts = [
        failed > 0 ? "\(failed) failed" : nil, warned > 0 ? "\(warned) warning\(warned == 1 ? "" : "s")" : nil,
      ].compactMap { $0 }
      text += "\(checks.count) checks: \(counts.joined(separator: ", ")).\n"
    }
    return text
  }

  private func lines(_ text: String) -> [String] {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { TerminalSafe.text(String($0)) }
  }
}
