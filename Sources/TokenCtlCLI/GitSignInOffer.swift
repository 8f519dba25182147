import NativeAppSupport
import TokenKit

/// Offers to sign in when git asks for a host that a type serves but no account of it
/// is signed in, and someone is at the terminal to answer.
///
/// Git's own prompts use the terminal unless `GIT_TERMINAL_PROMPT=0`; the offer follows
/// the same rule. It is made on `/dev/tty`, since the helper's standard streams are git's
/// pipes, and the sign-in runs there as `tokenctl login TYPE` would: the browser with a
/// display, the device grant without one.
struct GitSignInOffer {
  /// The running helper's session: the sign-in lands in its group, where the helper looks,
  /// with the type files and config.toml it has read.
  let session: CommandSession

  /// Whether an account was signed in.
  func callAsFunction(types: [String], host: String) async throws -> Bool {
    // Which type to sign in to is not ours to guess when several serve the host.
    let context = session.context
    guard types.count == 1, context.environment["GIT_TERMINAL_PROMPT"] != "0",
      let terminal = context.terminal()
    else { return false }
    let type = types[0]
    terminal.write("tokenctl: no \(type) account is signed in for \(host). Sign in now? [Y/n] ")
    guard let answer = terminal.readLine()?.lowercased().filter({ $0 != " " && $0 != "\t" }),
      answer.isEmpty || answer.hasPrefix("y")
    else { return false }
    let login = try TokenCtl.Login.parse([type, "--group", session.store.group])
    var onTerminal = context
    onTerminal.output = TerminalOutput(terminal: terminal)
    onTerminal.readLine = { terminal.readLine() }
    do {
      try await login.run(
        in: CommandSession(context: onTerminal, store: session.store, configuration: session.configuration))
      return true
    } catch let error as TokenKitError {
      TokenCtl.report(error, context: onTerminal, json: false)
      return false
    }
  }
}
