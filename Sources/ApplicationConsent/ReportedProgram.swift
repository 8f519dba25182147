/// The program a forwarded host says is asking (``AgentMessage``'s `program` field), made
/// safe to show: the host can write anything there, and the agent cannot check it, since
/// the host's processes are not ours to see. So it is never an identity (the host's name
/// is), only words in the prompt, quoted and marked as what the host reports.
///
/// Kept: letters, digits and ` ._+-/:@=()`, at most ``maximumLength`` bytes. Anything else
/// (control characters, markup a notification server would render, text that turns the
/// line around) becomes `?`, so that the words cannot pass for the prompt's own.
public struct ReportedProgram: Sendable, Hashable, CustomStringConvertible {
  public let text: String

  /// Enough for a helper's name and the command that ran it, and short enough that the
  /// prompt stays the host's and the account's, not the host's story.
  static let maximumLength = 64

  /// `raw` made safe; nil when nothing is left of it.
  public init?(_ raw: String) {
    var kept: [UInt8] = []
    for byte in raw.utf8 {
      guard kept.count < Self.maximumLength else { break }
      let safe =
        (byte >= 97 && byte <= 122) || (byte >= 65 && byte <= 90) || (byte >= 48 && byte <= 57)
        || Array(" ._+-/:@=()".utf8).contains(byte)
      if safe {
        kept.append(byte)
      } else if kept.last != UInt8(ascii: "?") {
        kept.append(UInt8(ascii: "?"))
      }
    }
    let text = String(decoding: kept, as: UTF8.self).trimmingSpaces()
    guard !text.isEmpty, text.contains(where: { $0 != "?" && $0 != " " }) else { return nil }
    self.text = text
  }

  /// The program the forwarded host reports for the request being admitted, for the
  /// prompt that may ask about it. A task-local value, not an argument of consent's
  /// decision: it decides nothing, and so passes by it to the prompt alone (the question's
  /// tasks inherit it; callers that join a question already on screen see its first words).
  @TaskLocal public static var asking: ReportedProgram?

  /// The text quoted, as the prompt shows it.
  public var description: String { "\u{201C}\(text)\u{201D}" }
}

extension String {
  fileprivate func trimmingSpaces() -> String {
    String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
  }
}
