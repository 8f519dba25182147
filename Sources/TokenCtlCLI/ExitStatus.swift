import TokenKit

/// tokenctl's exit codes: one table that the error mapping, `--help` and the man page all
/// read, so they cannot disagree.
public enum ExitStatus: Int32, CaseIterable, Sendable {
  case success = 0
  case failure = 1
  case noSuchAccount = 2
  case ambiguousAccount = 3
  case tokenNotValid = 4
  case unknownAccountType = 6
  case keyringLocked = 7
  case keyringUnavailable = 8
  case corruptItem = 9
  /// swift-argument-parser's code for a usage error (sysexits' EX_USAGE).
  case usage = 64

  var meaning: String {
    switch self {
    case .success: return "Success."
    case .failure: return "A failure not listed below."
    case .noSuchAccount: return "No account matches the name given."
    case .ambiguousAccount: return "The name matches several accounts (listed on standard error)."
    case .tokenNotValid: return "The access token expires within --min-valid seconds."
    case .unknownAccountType: return "No account type has that id."
    case .keyringLocked: return "The keyring is locked."
    case .keyringUnavailable:
      return "No session bus, no Secret Service, or no default keyring."
    case .corruptItem: return "A stored item is damaged or from a newer tokenctl."
    case .usage: return "The command line is wrong."
    }
  }

  /// The exit status for an error a command threw.
  init(for error: TokenKitError) {
    switch error.code {
    case .noSuchAccount: self = .noSuchAccount
    case .ambiguousAccount: self = .ambiguousAccount
    case .tokenNotValid: self = .tokenNotValid
    case .unknownAccountType: self = .unknownAccountType
    case .keyringLocked: self = .keyringLocked
    case .keyringUnavailable: self = .keyringUnavailable
    case .corruptItem: self = .corruptItem
    default: self = .failure
    }
  }

  /// The table as it appears in `--help` and tokenctl(1).
  static var documentation: String {
    "Exit status:\n"
      + allCases.map { status in
        let code = String(status.rawValue)
        return "  " + code + String(repeating: " ", count: 4 - code.count) + status.meaning
      }.joined(separator: "\n")
  }
}
