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
  /// is certain are taken, exactly two words with no option, no `--`, no `help`, nothing
  /// empty and nothing starting with `-`. Anything else, `--help` and every mistake
  /// included, goes to the parser. The tests run both ways and compare.
  enum Shortcut {
    case token(account: String)
    case credential(operation: String)

    init?(_ arguments: [String]) {
      guard arguments.count == 2, let command = arguments.first, let value = arguments.last,
        !value.isEmpty, !value.hasPrefix("-"), value != "help"
      else { return nil }
      // The commands' names, as their configurations give them (a test checks).
      switch command {
      case "token": self = .token(account: value)
      case "credential": self = .credential(operation: value)
      default: return nil
      }
    }

    func run() async throws {
      switch self {
      case .token(let account): try await Token.printToken(account: account, minValid: nil, group: nil)
      case .credential(let operation): try await Credential.answer(operation: operation, group: nil)
      }
    }
  }
}
