import AgentFrontEnd
import ArgumentParser
import CredentialHelpers
import SecretServiceStore
import Synchronization
import TokenKit

#if canImport(Foundation)
  import Foundation
#endif

/// The `tokenctl` command.
public struct TokenCtl: ParsableCommand {
  /// The release's version: the front end's, which prints it without the full program.
  public static let version = FrontEnd.version

  // Every command names itself with `commandName`: without it swift-argument-parser
  // derives each subcommand's name with `String(describing:)` on every start, whose
  // protocol-conformance scans cost `tokenctl token` a fifth of its instructions.
  public static let configuration = CommandConfiguration(
    commandName: "tokenctl",
    abstract: "Keep OAuth 2.0 and OpenID Connect tokens for many accounts in the GNOME keyring.",
    discussion: """
      tokenctl signs in to services such as Microsoft Graph or any OpenID Connect provider, \
      keeps each account's tokens in the Secret Service (the GNOME keyring) and hands fresh \
      access tokens to scripts, git and desktop tools. Accounts live in groups: every tool \
      that uses the same group shares the same sign-ins. The keyring format is documented \
      in tokenctl-keyring(5).

      An ACCOUNT is TYPE:NAME, or a NAME (display name or account id) that is unique in the group.

      Account types are configured in config.toml (client ids, issuers, scopes, and a hook \
      command run on account events): see tokenctl-config(5). Account types of your own are \
      TOML files in $XDG_CONFIG_HOME/tokenctl/types and $XDG_CONFIG_DIRS/tokenctl/types: see \
      tokenctl-types(5).

      Shell completion: `tokenctl --generate-completion-script bash|zsh|fish` prints the \
      script for a shell (`make install` installs all three). It completes commands, \
      options, account types and the group's accounts, whose names it reads from the \
      keyring without reading a token.

      \(environment)

      \(ExitStatus.documentation)
      """,
    version: "tokenctl \(version)",
    // A tool whose helper is a plain one has its command from its protocol
    // (``plainToolCommands``); the others have commands of their own.
    subcommands: [
      Types.self, Login.self, List.self, Status.self, Token.self, Refresh.self, Revoke.self, Request.self, Graph.self,
      Credential.self, SetupGit.self, DockerCredential.self, SetupDocker.self, CargoCredential.self,
    ]
      + plainToolCommands
      + [
        AgentCommand.self,
        Allow.self, Deny.self, Ssh.self,
        Apps.self, Unregister.self,
        Doctor.self,
        RefreshWorker.self,
      ]
  )

  /// The root help as a user meets it (`--help`, `-h`, `help`): the commands first, as
  /// git's and gh's help has them. swift-argument-parser prints the discussion, which holds
  /// the Environment and Exit status lists for the man page's DESCRIPTION, before USAGE;
  /// here they move after the commands, whole, above the pointer to each command's help.
  /// Any other text is returned as it is.
  static func commandsFirst(_ help: String) -> String {
    var lines = help.split(separator: "\n", omittingEmptySubsequences: false)
    var moved: [Substring] = []
    for title in ["Environment:", "Exit status:"] {
      guard let start = lines.firstIndex(of: Substring(title)) else { return help }
      let blank = lines[start...].firstIndex(of: "") ?? lines.endIndex
      moved += lines[start..<blank] + [""]
      lines.removeSubrange(start..<min(blank + 1, lines.endIndex))
    }
    let pointer = lines.lastIndex { $0.hasPrefix("  See '") } ?? lines.endIndex
    lines.insert(contentsOf: moved, at: pointer)
    return lines.joined(separator: "\n")
  }

  /// The variables tokenctl reads, for the help's Environment section.
  private static var environment: String {
    HelpList.render(
      "Environment",
      [
        ("TOKENCTL_GROUP", "The group when --group is not given (else '\(Account.defaultGroup)')."),
        ("TOKENCTL_CONFIG", "The configuration file (else $XDG_CONFIG_HOME/tokenctl/config.toml)."),
        ("BROWSER", "Browsers to open sign-in pages with, ':'-separated; else xdg-open."),
        ("DISPLAY, WAYLAND_DISPLAY", "When neither is set, nor BROWSER, login uses the device grant where it can."),
        ("XDG_CACHE_HOME", "Discovery documents are cached under tokenctl/discovery (a day)."),
        ("XDG_RUNTIME_DIR", "Refresh lock files go under tokenctl/locks (else the cache directory)."),
        ("XDG_STATE_HOME", "Applications' grants and the audit log go under tokenctl (allow, deny, apps)."),
        ("NO_COLOR", "When set and not empty, output is never coloured."),
        ("SSL_CERT_FILE", "A PEM file of CA certificates to trust instead of the system's (as OpenSSL reads it)."),
        (
          "TOKENCTL_LOG",
          "debug: log every HTTP exchange on standard error (method, URL without query values, status, size, "
            + "time; never a header or body)."
        ),
      ], termWidth: 15)
  }

  @Flag(
    name: [.customShort("v"), .long],
    help: "Log every HTTP exchange on standard error, without tokens (as TOKENCTL_LOG=debug); any command takes it.")
  var verbose = false

  @Flag(
    name: [.customShort("q"), .long],
    help: "Say nothing when all went well (errors and warnings still go to standard error); any command takes it.")
  var quiet = false

  public init() {}

  /// Parses `arguments`, runs the command in `context`, reports any error, and returns the
  /// exit status. The executable and the tests both come through here.
  ///
  /// `shortcuts: false` sends every command line through the parser, which the tests
  /// compare ``Shortcut``'s answers with.
  public static func main(arguments: [String], context: CLIContext, shortcuts: Bool = true) async -> Int32 {
    // --verbose belongs to every command; it is taken out here, before the subcommand
    // parses, anywhere up to a `--`.
    var arguments = arguments
    var context = context
    if arguments.first == "-v" {
      arguments.removeFirst()
      context.environment["TOKENCTL_LOG"] = "debug"
    }
    let options = arguments.firstIndex(of: "--") ?? arguments.endIndex
    if arguments[..<options].contains("--verbose") {
      arguments = arguments.enumerated().filter { $0.element != "--verbose" || $0.offset >= options }.map(\.element)
      context.environment["TOKENCTL_LOG"] = "debug"
    }
    // --quiet (-q) too, anywhere up to a `--` (which the line above may have moved); no
    // command has a -q of its own.
    let quietOptions = arguments.firstIndex(of: "--") ?? arguments.endIndex
    let isQuiet = { (word: String) in word == "--quiet" || word == "-q" }
    if arguments[..<quietOptions].contains(where: isQuiet) {
      arguments = arguments.enumerated().filter { !isQuiet($0.element) || $0.offset >= quietOptions }.map(\.element)
      context.isQuiet = true
    }
    arguments = asCargoRunsIt(arguments)
    if context.isDebugging { context = context.debugging() }
    let shortcut = shortcuts ? Shortcut(arguments) : nil
    var command: (any ParsableCommand)?
    if shortcut == nil {
      do {
        // Shell completion runs inside the parser (`---completion`); its account and type
        // lists read the context (see ``ShellCompletion``).
        command = try CLIContext.$current.withValue(context) { try parseAsRoot(arguments) }
      } catch {
        return reportParserOutcome(error, context: context, arguments: arguments)
      }
    }
    return await CLIContext.$current.withValue(context) {
      do {
        if let shortcut {
          try await shortcut.run(context: context)
        } else if var command = command as? any AsyncParsableCommand {
          try await command.run()
        } else if var command {
          try command.run()
        }
        for warning in context.warnings.drain() {
          context.output.writeError("tokenctl: warning: \(TerminalSafe.text(warning))\n")
        }
        return ExitStatus.success.rawValue
      } catch let error as TokenKitError {
        report(error, context: context, json: (command as? any JSONOutputting)?.json ?? false)
        return ExitStatus(for: error).rawValue
      } catch {
        return reportParserOutcome(error, context: context)
      }
    }
  }

  /// Cargo runs an external credential provider as `PROGRAM --cargo-plugin`, whatever
  /// else its `credential-provider` says (the rest comes in each request's `args`): that is
  /// the provider's command line, `cargo-credential --cargo-plugin` to the parser, and no
  /// other command takes the flag.
  static func asCargoRunsIt(_ arguments: [String]) -> [String] {
    arguments.first == CargoCredential.pluginFlag ? [CargoCredential.commandName] + arguments : arguments
  }

  /// Help, `--version`, usage errors and `ExitCode`: swift-argument-parser words them and
  /// chooses their codes; help goes to standard output, the rest to standard error. The
  /// bash completion script gets our addition (``BashCompletionScript``).
  private static func reportParserOutcome(_ error: any Error, context: CLIContext, arguments: [String] = []) -> Int32 {
    let code = exitCode(for: error)
    // A shell's request for completions (``ShellCompletion``) that the parser cannot
    // answer, as fish 3's `complete -C` sends without a cursor: no words and no message,
    // which would land on the user's command line.
    if arguments.first == "---completion", !code.isSuccess { return ExitStatus.success.rawValue }
    var text = fullMessage(for: error)
    if code.isSuccess { text = commandsFirst(text) }
    if code.isSuccess, BashCompletionScript.isRequested(by: arguments) { text = BashCompletionScript.amended(text) }
    if !code.isSuccess, let meant = commandMeant(by: arguments) { text += "\nhint: Did you mean `\(meant)`?" }
    if !text.isEmpty {
      if code.isSuccess { context.output.write(text + "\n") } else { context.output.writeError(text + "\n") }
    }
    return code.rawValue
  }

  /// The command line `arguments` was likely meant as when its first word is no command
  /// but a slip of one (`lsit`), with the rest as given: a command that runs as shown.
  static func commandMeant(by arguments: [String]) -> String? {
    guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
    let commands = configuration.subcommands.filter { $0.configuration.shouldDisplay }.flatMap {
      [$0.configuration.commandName].compactMap { $0 } + $0.configuration.aliases
    }
    guard !commands.contains(first), let command = EditDistance.closest(to: first, among: commands) else {
      return nil
    }
    return (["tokenctl", command] + arguments.dropFirst().map(ShellWord.quoted)).joined(separator: " ")
  }

  static func report(_ error: TokenKitError, context: CLIContext, json: Bool) {
    // Messages quote names from the keyring and the command line; keep their control
    // characters off the terminal. Line breaks of our own are kept.
    let lines = error.message.split(separator: "\n", omittingEmptySubsequences: false).map {
      TerminalSafe.text(String($0))
    }
    var text = "tokenctl: \(lines.joined(separator: "\n"))\n"
    let recipe = headlessKeyringRecipe(for: error, context: context)
    let recovery = recipe ?? RemedyWording.recovery(for: error)
    if let recipe {
      // Our own text, a command a line: its line breaks are kept.
      text += "hint: \(recipe)\n"
    } else if let recovery {
      text += "hint: \(TerminalSafe.text(recovery))\n"
    }
    context.output.writeError(text)
    if json {
      let status = ExitStatus(for: error)
      context.output.write(
        JSONOutput.render(
          ErrorDocument(
            error: .init(
              code: error.code.description, message: error.message, recovery: recovery, exit: status.rawValue))))
    }
  }
}

extension TokenCtl {
  /// Outside a desktop, the hint for a keyring that cannot be reached is `doctor`'s recipe
  /// for the step that fails, in a terminal: the store's own hints send the user to a
  /// desktop session or to Seahorse, and `dbus-run-session` alone leads to a bus without a
  /// keyring. Nil on a desktop, for other errors, and where the road to the keyring
  /// passes every step now.
  ///
  /// Not for a locked keyring, whose hint the agent gives too (the answers are the same
  /// through the agent and without it), and never more than a second of diagnosis: a
  /// keyring that stopped answering would cost a D-Bus timeout per step on top of the
  /// one the command already waited out.
  static func headlessKeyringRecipe(for error: TokenKitError, context: CLIContext) -> String? {
    guard error.code == .keyringUnavailable,
      let session = HeadlessSession(environment: context.environment),
      let diagnose = context.diagnoseKeyring
    else { return nil }
    let result = Mutex<SecretServiceDiagnosis?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      let diagnosis = diagnose()
      result.withLock { $0 = diagnosis }
      done.signal()
    }
    guard done.wait(timeout: .now() + 1) == .success, let step = result.withLock({ $0 })?.failure?.step else {
      return nil
    }
    return session.keyringRecipe(step)
  }
}

struct ErrorDocument: Encodable {
  struct Detail: Encodable {
    var code: String
    var message: String
    var recovery: String?
    var exit: Int32
  }
  let format = JSONOutput.formatVersion
  var error: Detail
}
