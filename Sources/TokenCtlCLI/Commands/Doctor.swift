import ArgumentParser
import SecretServiceStore
import TokenKit

extension TokenCtl {
  /// `tokenctl doctor`: what stands between the user and a token, and how to fix it.
  struct Doctor: AsyncParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "doctor",
      abstract: "Check what tokenctl needs, in order, and say how to fix what is missing.",
      discussion: """
        Each check prints ok, warn or fail and, for warn and fail, the fix: a command to run \
        or a line to add. The checks, in order, by their ids in --json:

        libsecret, session-bus, secret-service, default-keyring, keyring-unlocked: the way to \
        the keyring. Where there is no desktop session (SSH, WSL, a server), the fix says how to \
        get a keyring there: dbus-run-session, gnome-keyring-daemon --unlock, or \
        pam_gnome_keyring. The checks after a failed one are left out: they cannot be asked. \
        Under KWallet a locked keyring is a warning: KWallet keeps its Secret Service collection \
        locked until a program unlocks it, and tokenctl unlocks it on first use.

        config, type-files: config.toml and the account type files, judged as every command \
        reads them (valid, owner and mode).

        client-id:TYPE: a client id for each account type in use (with accounts in the group, \
        configured in config.toml, or from a type file of yours). A missing one fails, except \
        for a type that discovers its endpoints, which may register itself at the first sign-in.

        git:URL, git-helper-program: for each git host of those types, over each scheme the \
        helper answers, whether git asks tokenctl, and whether another helper comes first \
        (gitcredentials(7)); and whether git finds git-credential-tokenctl. git-rule:PREFIX: a \
        [credentials.accounts] rule whose account's type serves no such host, so it never applies.

        agent, libcurl: whether the agent runs (not running is fine), and whether libcurl loads.

        With --online, discovery:ISSUER and clock: each issuer's discovery document, fetched \
        afresh (network, TLS, the document), and this machine's clock against the servers' \
        Date headers (a warning beyond a minute). registration:TYPE:ASPECT: what the provider \
        shows of the app's registration without signing anyone in, where the type's plugin can \
        ask (Microsoft's: tokenctl-providers(7)).

        doctor lists accounts but never reads a token, and prints no secret.

        Exit status: 0 when no check failed (warnings do not count), 1 when one did, 64 for a \
        usage error.
        """)

    @Flag(help: "Also check each issuer over the network (discovery, TLS, clock skew).")
    var online = false

    @Flag(help: "Print JSON (with a format version) instead of text.")
    var json = false

    @OptionGroup var groupOption: GroupOption

    func run() async throws {
      let context = CLIContext.running
      let group = try GroupOption.name(groupOption.group, in: context)
      let diagnosis = SecretServiceDiagnosis.run()
      var checks = KeyringChecks.checks(diagnosis, environment: context.environment)
      let inventory = DoctorInventory(context: context, group: group, listAccounts: diagnosis.failure == nil)
      checks.append(SettingsChecks.configuration(inventory))
      checks.append(SettingsChecks.typeFiles(inventory))
      checks += SettingsChecks.clientIDs(inventory)
      checks += GitHelperChecks.checks(inventory)
      checks += GitHelperChecks.rules(inventory)
      checks.append(AgentCheck.check(environment: context.environment))
      checks.append(LibcurlCheck.check())
      if online { checks += await OnlineChecks.checks(inventory) }

      let report = DoctorReport(checks: checks)
      context.output.write(json ? JSONOutput.render(report) : report.text(style: Style(context: context)))
      if !report.ok { throw ExitCode(ExitStatus.failure.rawValue) }
    }
  }
}
