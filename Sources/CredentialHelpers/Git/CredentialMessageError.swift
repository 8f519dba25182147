/// Why a credential message was refused.
///
/// A struct over a private code, so that new reasons break no caller; two errors are
/// equal when their reasons are, whatever the line.
public struct CredentialMessageError: Error, Sendable, Hashable, CustomStringConvertible {
  private enum Code: Sendable, Hashable {
    case nulByte, carriageReturn, lineTooLong, inputTooLong, missingEquals, emptyKey, invalidUTF8
    case missingAttribute(String)
    case unsafeValue
    case invalidURL
    case ambiguousURL(Ambiguity)
  }

  /// What in a URL the tools that send a token read as another host than tokenctl does
  /// (``CredentialMessage/ambiguity(in:host:)`` says why each is refused).
  public enum Ambiguity: Sendable, Hashable {
    /// A `\`.
    case backslash
    /// A `://` after the scheme's own.
    case nestedURL
    /// A `%` in the host.
    case percentInHost
    /// A `[` or `]` in the host other than around an IPv6 literal.
    case strayBracket
  }

  private let code: Code
  /// The 1-based input line at fault, when there is one.
  public let line: Int?
  /// The attribute at fault, when there is one.
  public let key: String?

  private init(_ code: Code, line: Int? = nil, key: String? = nil) {
    self.code = code
    self.line = line
    self.key = key
  }

  public static func nulByte(line: Int? = nil) -> Self { Self(.nulByte, line: line) }
  public static func carriageReturn(line: Int? = nil) -> Self { Self(.carriageReturn, line: line) }
  public static func lineTooLong(line: Int? = nil) -> Self { Self(.lineTooLong, line: line) }
  public static let inputTooLong = Self(.inputTooLong)
  public static func missingEquals(line: Int? = nil) -> Self { Self(.missingEquals, line: line) }
  public static func emptyKey(line: Int? = nil) -> Self { Self(.emptyKey, line: line) }
  public static func invalidUTF8(line: Int? = nil) -> Self { Self(.invalidUTF8, line: line) }
  public static func missingAttribute(_ name: String) -> Self { Self(.missingAttribute(name), key: name) }
  public static func unsafeValue(key: String? = nil) -> Self { Self(.unsafeValue, key: key) }
  public static func invalidURL(line: Int? = nil) -> Self { Self(.invalidURL, line: line, key: "url") }
  public static func ambiguousURL(_ ambiguity: Ambiguity, line: Int? = nil) -> Self {
    Self(.ambiguousURL(ambiguity), line: line, key: "url")
  }

  public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
  public func hash(into hasher: inout Hasher) { hasher.combine(code) }

  public var description: String {
    let at = line.map { "line \($0): " } ?? ""
    switch code {
    case .nulByte: return at + "a NUL byte"
    case .carriageReturn: return at + "a carriage return (the protocol's lines end with a line feed alone)"
    case .lineTooLong: return at + "a line longer than \(CredentialMessage.maximumLineLength) bytes"
    case .inputTooLong: return "more than \(CredentialMessage.maximumInputLength) bytes of input"
    case .missingEquals: return at + "a line without '=' (expected key=value)"
    case .emptyKey: return at + "a line with an empty key"
    case .invalidUTF8: return at + "a line that is not UTF-8"
    case .missingAttribute(let name): return "no '\(name)' attribute"
    case .unsafeValue: return "attribute '\(key ?? "")' holds a line break or a NUL and cannot be sent"
    case .invalidURL: return at + "a 'url' that is not scheme://host[:port][/path] or host[:port][/path]"
    case .ambiguousURL(let ambiguity):
      let what =
        switch ambiguity {
        case .backslash: "a backslash"
        case .nestedURL: "'://' after its scheme, a URL inside the URL"
        case .percentInHost: "a percent-encoded host"
        case .strayBracket: "a bracket in its host other than around an IPv6 address"
        }
      return at
        + "a 'url' with \(what), whose host tools read otherwise than tokenctl does: no token is given for it."
        + " Check where the URL came from, and use the server's URL as the server gives it"
    }
  }
}
