import CredentialHelpers
import NativeAppSupport
import ProcessRuntime
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// git's credential configuration as checks: for each URL tokenctl answers git for
/// (the hosts of the git types in use, each over the schemes the helper answers there,
/// and the URLs git already sends to tokenctl), whether git asks tokenctl, and first.
///
/// The real git reads its configuration (`git config --get-regexp`, every file and
/// include as git itself reads them) and judges which helper lines apply to a URL
/// (`git config --get-urlmatch`); ``GitHelperList`` puts them in the order git asks them.
enum GitHelperChecks {
  static func checks(_ inventory: DoctorInventory) -> [DoctorCheck] {
    let environment = ChildEnvironment.sanitized(inventory.context.environment)
    let chooser = CredentialAccountChooser(
      types: inventory.typesInUse.compactMap { GitAccountType($0.descriptor) },
      knownTypes: Set(inventory.registry.ids))
    var accounts: [String: [Account]] = [:]
    for type in chooser.typesWithoutHosts { accounts[type.id] = inventory.accounts(ofType: type.id) }
    let served = chooser.servedHosts(accounts: accounts).flatMap { chooser.servedURLs(of: $0, accounts: accounts) }

    guard
      let listing = ChildProcess.capture(
        ["git", "config", "--null", "--show-scope", "--get-regexp", GitHelperList.keyPattern],
        environment: environment)
    else {
      guard !served.isEmpty else { return [] }
      return [
        .warn(
          "git", "git", "git cannot be run, so no git command gets tokens from tokenctl",
          fix: "Install git: `sudo apt install git`.")
      ]
    }
    // 1: no helper line at all.
    guard listing.status == 0 || listing.status == 1 else {
      return [
        .warn(
          "git", "git", "git could not read its configuration (git config exited with status \(listing.status))",
          fix: "Run `git config --list` to see git's error, and correct the file it names.")
      ]
    }
    let entries = GitHelperList.entries(parsing: listing.output)
    var urls = served
    for entry in entries where entry.isTokenctl {
      if let url = entry.context.flatMap(Self.servedURL), !urls.contains(url) { urls.append(url) }
    }
    guard !urls.isEmpty else {
      return [.ok("git", "git", "no account type in use serves a git host, and git asks tokenctl for none")]
    }
    var checks: [DoctorCheck] = []
    var namesTokenctl = false
    for url in urls {
      let applying = matching(entries, url: url, environment: environment)
      let list = GitHelperList(applying)
      namesTokenctl = namesTokenctl || list.helpers.contains { $0.isTokenctl && $0.value.hasPrefix("tokenctl") }
      checks.append(check(url, list, inventory: inventory))
    }
    if namesTokenctl { checks.append(helperProgram(environment)) }
    return checks
  }

  /// Each `[credentials.accounts]` rule of config.toml that can never apply, because the
  /// account it names is of a type that does not serve the rule's host: `get` declines
  /// there, with the same words (``CredentialDecline/ruleCannotApply(_:account:host:)``).
  static func rules(_ inventory: DoctorInventory) -> [DoctorCheck] {
    guard let rules = inventory.configuration?.gitAccounts, !rules.isEmpty else { return [] }
    let chooser = CredentialAccountChooser(registry: inventory.registry, rules: rules)
    var accounts: [String: [Account]] = [:]
    for type in chooser.typesWithoutHosts { accounts[type.id] = inventory.accounts(ofType: type.id) }
    return rules.keys.sorted().compactMap { prefix in
      let name = rules[prefix] ?? ""
      // A name without a type: the type of the one signed-in account of that name.
      let named = (inventory.accounts ?? []).filter { $0.name == name || $0.id == name }
      let type = named.count == 1 ? named[0].type : nil
      guard let (host, _) = chooser.ruleThatCannotApply(prefix: prefix, type: type, accounts: accounts) else {
        return nil
      }
      let (problem, fix) = CredentialDecline.ruleCannotApply(
        "the rule for \(prefix) in config.toml", account: type.map { "\($0):\(name)" } ?? name, host: host)
      return .warn("git-rule:\(prefix)", "git rule for \(prefix)", problem, fix: fix + ".")
    }
  }

  /// The scheme and host of a `credential.<url>` context that is an http or https URL.
  private static func servedURL(_ context: String) -> GitServedURL? {
    let parts = context.split(separator: "://", maxSplits: 1)
    guard parts.count == 2 else { return nil }
    let scheme = parts[0].lowercased()
    guard scheme == "https" || scheme == "http" else { return nil }
    var host = parts[1].prefix { $0 != "/" }
    if let at = host.lastIndex(of: "@") { host = host[host.index(after: at)...] }
    guard !host.isEmpty, !host.contains("*") else { return nil }
    return GitServedURL(scheme: scheme, host: String(host))
  }

  /// The lines that apply to `url`, judged by git's own URL matching on a configuration
  /// that holds only them (see ``GitHelperList/urlMatchSettings(_:scheme:)``).
  private static func matching(
    _ entries: [GitHelperList.Entry], url: GitServedURL, environment: [String: String]
  ) -> [GitHelperList.Entry] {
    guard entries.contains(where: { $0.context != nil }) else { return entries }
    var isolated = GitHelperList.urlMatchSettings(entries, scheme: url.scheme)
    isolated["PATH"] = environment["PATH"]
    isolated["HOME"] = environment["HOME"]
    isolated["GIT_CONFIG_NOSYSTEM"] = "1"
    isolated["GIT_CONFIG_GLOBAL"] = "/dev/null"
    let result = ChildProcess.capture(
      ["git", "--git-dir=/nonexistent", "config", "--get-urlmatch", "credential", url.description],
      environment: isolated)
    return GitHelperList.entriesMatching(
      entries, urlMatchOutput: String(decoding: result?.output ?? [], as: UTF8.self))
  }

  private static func check(_ url: GitServedURL, _ list: GitHelperList, inventory: DoctorInventory) -> DoctorCheck {
    let id = "git:\(url)"
    let title = "git for \(url)"
    func name(_ entry: GitHelperList.Entry) -> String { "\(program(entry)) (\(entry.key), \(entry.scope))" }
    if let before = list.helpersBeforeTokenctl, let tokenctl = list.helpers.first(where: \.isTokenctl) {
      guard !before.isEmpty else {
        let after = list.helpers.dropFirst().map(program)
        return .ok(
          id, title,
          "git asks tokenctl first (\(tokenctl.key), \(tokenctl.scope))"
            + (after.isEmpty ? "" : "; then \(after.joined(separator: ", "))"))
      }
      let scope = tokenctl.scope == "command" ? "global" : tokenctl.scope
      let key = "credential.\(url).helper"
      var commands: [String] = []
      if tokenctl.key == key { commands.append("git config --\(scope) --unset-all \(key) '^tokenctl$'") }
      commands += ["git config --\(scope) --add \(key) ''", "git config --\(scope) --add \(key) tokenctl"]
      return .warn(
        id, title,
        "git asks \(before.map(name).joined(separator: ", ")) before tokenctl: when "
          + (before.count == 1 ? "it holds" : "one of them holds")
          + " a credential for \(url), git uses that and never asks tokenctl",
        fix: "To have git ask only tokenctl for \(url), add an empty helper (which clears those before it, "
          + "for this URL only) and tokenctl after it:\n"
          + commands.map { "  " + $0 }.joined(separator: "\n"))
    }
    if let clearing = list.clearingTokenctl.last {
      return .warn(
        id, title,
        "tokenctl's helper line is cleared by an empty \(clearing.key) (\(clearing.scope)) after it, "
          + "so git never asks tokenctl",
        fix: "Remove the empty line, if tokenctl should answer: "
          + "`git config --\(clearing.scope) --unset-all \(clearing.key) '^$'`.")
    }
    let others = list.helpers.map(program)
    let group = inventory.group == Account.defaultGroup ? "" : " --group \(inventory.group)"
    return .warn(
      id, title,
      "git does not ask tokenctl for \(url)"
        + (others.isEmpty ? "" : " (it asks \(others.joined(separator: ", ")))"),
      fix: "Run `tokenctl setup-git --host \(url.host)\(group)`.")
  }

  /// A helper as the user would name it, without what follows the program: a shell
  /// helper (`!f() { echo password=…; }; f`) or an argument may hold a secret.
  private static func program(_ entry: GitHelperList.Entry) -> String {
    if entry.value.hasPrefix("!") { return "a shell command (!…)" }
    let words = entry.value.split(separator: " ")
    return "'\(words.first ?? "")'" + (words.count > 1 ? " …" : "")
  }

  /// Where git finds `git-credential-tokenctl`, which `helper = tokenctl` runs: git's own
  /// folder of programs, then PATH.
  private static func helperProgram(_ environment: [String: String]) -> DoctorCheck {
    let program = "git-credential-tokenctl"
    let execPath = ChildProcess.capture(["git", "--exec-path"], environment: environment).map {
      String(decoding: $0.output, as: UTF8.self).trimmingASCIIWhitespace()
    }
    let folders = [execPath].compactMap { $0 } + (environment["PATH"] ?? "").split(separator: ":").map(String.init)
    if let found = folders.map({ $0 + "/" + program }).first(where: { access($0, X_OK) == 0 }) {
      return .ok("git-helper-program", "git's tokenctl helper", "\(found) is what `helper = tokenctl` runs")
    }
    return .fail(
      "git-helper-program", "git's tokenctl helper",
      "git cannot find \(program), which `helper = tokenctl` runs: git fails to ask tokenctl",
      fix: "Install it beside tokenctl (`make install` puts both in the same folder), or add its folder to PATH.")
  }
}
