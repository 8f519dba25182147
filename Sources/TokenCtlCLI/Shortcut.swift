import AgentFrontEnd

extension TokenCtl {
  /// The two command lines run most, recognised without swift-argument-parser: `token
  /// ACCOUNT` (scripts, `curl -H "Authorization: Bearer $(tokenctl token …)"`) and
  /// `credential OPERATION` (git, through `git-credential-tokenctl get`); and the first
  /// one a new user runs, `tokenctl --help`.
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
    /// The root command's help (`--help`, `-h`, `help`), as the parser would print it.
    /// Through the parser it cost 22 M instructions, the help rendered twice (once to
    /// choose the exit status) and the whole command tree reflected to look for
    /// `--generate-completion-script` first; here, the one rendering, so that `--help`
    /// through the front end is no slower than the full program's was before it. The front
    /// end prints it itself where the width is the stored text's (``RootHelp``).
    case help

    init?(_ arguments: [String]) {
      if RootHelp.isRequested(by: arguments) {
        self = .help
        return
      }
      switch ClientCommand(arguments) {
      case .token(let account, let minValid, let group)?:
        self = .token(account: account, minValid: minValid, group: group)
      case .credential(let operation, let group)?: self = .credential(operation: operation, group: group)
      default: return nil
      }
    }

    func run(context: CLIContext) async throws {
      switch self {
      case .token(let account, let minValid, let group):
        try await Token.printToken(account: account, minValid: minValid, group: group)
      case .credential(let operation, let group): try await Credential.answer(operation: operation, group: group)
      case .help: context.output.write(TokenCtl.commandsFirst(TokenCtl.helpMessage()) + "\n")
      }
    }
  }
}
