import TokenKit

/// tokenctl's exit codes: one table that the error mapping, `--help` and the man page all
/// read, so they cannot disagree.
public enum ExitStatus: Int32, CaseIterable, Sendable {
  case success = 0
  case failure = 1
  case noSuchAccount = 2
  case ambiguousAccount = 3
  case tokenNotValid = 4
  case needsSignIn = 5
  case unknownAccountType = 6
  case keyringLocked = 7
  case keyringUnavailable = 8
  case corruptItem = 9
  case networkFailure = 10
  case serverError = 11
  case signInRefused = 12
  case signInTimedOut = 13
  case notConfigured = 14
  case revocationFailed = 15
  case httpError = 16
  case scopeRefused = 17
  case unusableFile = 18
  case agentFailure = 19
  /// swift-argument-parser's code for a usage error (sysexits' EX_USAGE).
  case usage = 64

  var meaning: String {
    switch self {
    case .success: return "Success."
    case .failure:
      return "A failure not listed below: the keyring failed in another way, or a process of tokenctl's own did."
    case .noSuchAccount: return "No account matches the name given."
    case .ambiguousAccount: return "The name matches several accounts (listed on standard error)."
    case .tokenNotValid: return "The access token is expired or too short-lived, and cannot be refreshed."
    case .needsSignIn:
      return "The server wants a new sign-in (it rejected the grant, or wants you in person); the account is kept."
    case .unknownAccountType: return "No account type has that id."
    case .keyringLocked: return "The keyring is locked."
    case .keyringUnavailable:
      return "No session bus, no Secret Service, or no default keyring."
    case .corruptItem: return "A stored item is damaged or from a newer tokenctl."
    case .networkFailure: return "The server could not be reached (DNS, connection, timeout, TLS); nothing changed."
    case .serverError: return "The server answered with an error or a malformed response; nothing changed."
    case .signInRefused: return "The sign-in was denied, or its response failed a check (state, issuer, ID token)."
    case .signInTimedOut: return "The sign-in was not finished in time."
    case .notConfigured: return "The account type lacks a client id, an issuer, or another setting."
    case .revocationFailed: return "The server could not revoke the tokens; the account is kept."
    case .httpError: return "The server answered with an HTTP error status; the body is printed."
    case .scopeRefused: return "The server refused a scope asked for, or wants consent to it; nothing changed."
    case .unusableFile:
      return "A local file or directory is unsafe (a link, another user's, open to others) or cannot be used."
    case .agentFailure:
      return
        "The agent could not be started or stopped, another one holds its socket, or it went silent in the middle of a refresh."
    case .usage: return "The command line is wrong, or an argument names no program or app."
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
    case .needsSignIn: self = .needsSignIn
    case .networkFailure: self = .networkFailure
    case .serverError: self = .serverError
    case .accessDenied, .signInFailed, .invalidIDToken: self = .signInRefused
    case .signInTimedOut: self = .signInTimedOut
    case .notConfigured, .invalidDescriptor: self = .notConfigured
    case .revocationFailed: self = .revocationFailed
    case .scopeRefused: self = .scopeRefused
    case .unusableFile: self = .unusableFile
    case .agentFailure: self = .agentFailure
    case .invalidArgument: self = .usage
    default: self = .failure
    }
  }

  /// The table as it appears in `--help` and tokenctl(1).
  static var documentation: String {
    HelpList.render("Exit status", allCases.map { (String($0.rawValue), $0.meaning) }, termWidth: 2)
  }
}
