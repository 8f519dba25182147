import AgentFrontEnd

extension TokenCtl {
  /// The two command lines run most, recognised without swift-argument-parser: `token
  /// ACCOUNT` (scripts, `curl -H "Authorization: Bearer $(tokenctl token …)"`) and
  /// `credential OPERATION` (git, through `git-credential-tokenctl get`).
  ///
  /// Parsing costs them a fifth of their instructions (the parser reflects over every
  /// command's definition and checks for `--generate-completion-script` before anything
  /// else), and its code pages a fair share of their memory. A shortcut runs the very
  /// function the parsed command's `run()` calls, with the values the parser would have
  /// given, and its errors are reported by the same code: only command lines whose parse
  /// is certain are taken, as `ClientCommand`, the one recogniser of such lines, takes them
  /// (the front end's and the agent fast path's too). Anything else, `--help` and every
  /// mistake included, goes to the parser. The tests run both ways and compare.
  enum Shortcut: Equatable {
    case token(account: String, minValid: Int?, group: String?)
    case credential(operation: String, group: String?)

    init?(_ arguments: [String]) {
      switch ClientCommand(arguments) {
      case .token(let account, let minValid, let group)?:
        self = .token(account: account, minValid: minValid, group: group)
      case .credential(let operation, let group)?: self = .credential(operation: operation, group: group)
      default: return nil
      }
    }

    func run() async throws {
      switch self {
      case .token(let account, let minValid, let group):
        try await Token.printToken(account: account, minValid: minValid, group: group)
      case .credential(let operation, let group): try await Credential.answer(operation: operation, group: group)
      }
    }
  }
}
