import Foundation
import TestSupport
import Testing

/// The completion scripts, as `make install` installs them, in bash, zsh and fish, with
/// the accounts of a private keyring.
///
/// Every account's secret there is not a token set: `tokenctl token` fails on each (the
/// first test checks), so a completion that loaded one would offer nothing. One account's
/// display name is a shell injection; the file it would create must never appear.
@Suite(.serialized) struct CompletionTests {
  static let hostileName = "evil$(touch MARKER)`touch MARKER`${IFS}'\"\n\u{1B}]0;x\u{07}{a,b}~"

  /// The accounts of the default group as `tokenctl token <TAB>` offers them: no bare
  /// `ada@contoso.com` (two types have one), and the hostile name by its id.
  static let defaultGroupWords: Set = [
    "Bob Smith", "github:gh-evil", "github:octocat", "gitlab:ada@contoso.com", "graph:Bob Smith",
    "graph:ada@contoso.com", "octocat",
  ]

  /// A private keyring with the accounts, the three scripts from the debug build, and
  /// an environment whose PATH finds that build's tokenctl first.
  final class World {
    let session: PrivateSession
    let environment: [String: String]
    let marker: String
    let scripts: [String: String]

    init() async throws {
      session = try await PrivateSession.started(.unlockedKeyring)
      marker = session.directory.appendingPathComponent("injected").path
      let binary = URL(fileURLWithPath: TestProcess.tokenctl).deletingLastPathComponent().path
      var environment = session.environment
      environment["PATH"] = binary + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
      self.environment = environment
      for (type, id, name, group) in [
        ("graph", "oid-ada", "ada@contoso.com", "default"), ("gitlab", "gl-ada", "ada@contoso.com", "default"),
        ("graph", "oid-bob", "Bob Smith", "default"), ("github", "gh-1", "octocat", "default"),
        ("github", "gh-evil", CompletionTests.hostileName.replacingOccurrences(of: "MARKER", with: marker), "default"),
        ("graph", "oid-w", "wendy", "work"),
      ] {
        let stored = try await session.run(
          "secret-tool",
          [
            "store", "--label", "tokenctl: \(type)", "xdg:schema", "org.tokenctl.Account", "type", type, "account", id,
            "group", group, "name", name, "created", "1790000000", "updated", "1790000000", "refreshable", "true",
          ], stdin: "not a token set")
        guard stored.status == 0 else { throw TestFailure("secret-tool store: \(stored.stderr)") }
      }
      var scripts: [String: String] = [:]
      for (shell, file) in [("bash", "tokenctl.bash"), ("zsh", "_tokenctl"), ("fish", "tokenctl.fish")] {
        let generated = try await TestProcess.run(TestProcess.tokenctl, ["--generate-completion-script", shell])
        guard generated.status == 0 else { throw TestFailure("--generate-completion-script \(shell) failed") }
        let path = session.directory.appendingPathComponent(file).path
        try generated.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        scripts[shell] = path
      }
      self.scripts = scripts
    }

    deinit { session.stop() }

    /// Calls the function bash's script registers for tokenctl as readline would, with
    /// `words` as COMP_WORDS (the cursor at the end of the last) and `cur` as the word
    /// readline completes; returns COMPREPLY.
    func bash(
      _ line: String, _ words: [String], cur: String? = nil, environment extra: [String: String] = [:]
    ) async throws -> [String] {
      let driver = """
        source "$1"
        COMP_LINE=$2 COMP_POINT=${#2} cur=$3
        shift 3
        COMP_WORDS=("$@") COMP_CWORD=$(($# - 1))
        spec=$(complete -p tokenctl) && function=${spec##* -F } && function=${function%% *}
        "$function" tokenctl "$cur" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf '%s\\0' "${COMPREPLY[@]}"
        """
      let result = try await TestProcess.run(
        "bash", ["-c", driver, "bash", scripts["bash"]!, line, cur ?? words.last!] + words,
        environment: environment.merging(extra) { $1 })
      guard result.status == 0, result.stderr.isEmpty else {
        throw TestFailure("bash completion of '\(line)': \(result.status) \(result.stderr)")
      }
      return result.stdout.split(separator: "\0").map(String.init)
    }

    /// Types `line` and a TAB in an interactive `shell` (Tests/Support/complete-interactively.py).
    func typed(_ line: String, in shell: String) async throws -> (candidates: [String], line: String) {
      let result = try await TestProcess.run(
        AuthServer.path("Tests/Support/complete-interactively.py"),
        ["--shell", shell, "--script", scripts[shell]!, "--", line], environment: environment)
      guard result.status == 0, let data = result.stdout.data(using: .utf8),
        let answer = try JSONSerialization.jsonObject(with: data) as? [String: Any],
        let candidates = answer["candidates"] as? [String], let edited = answer["line"] as? String
      else { throw TestFailure("\(shell), '\(line)': \(result.status) \(result.stdout) \(result.stderr)") }
      return (candidates, edited)
    }
  }

  @Test func bashCompletesCommandsOptionsTypesAndAccounts() async throws {
    let world = try await World()
    // The premise: every secret is unreadable, so only the listing can complete.
    let token = try await world.session.tokenctl("token", "graph:ada@contoso.com")
    #expect(token.status == 9 && token.stdout.isEmpty, "\(token.stderr)")

    #expect(try await world.bash("tokenctl to", ["tokenctl", "to"]) == ["token"])
    #expect(try await world.bash("tokenctl list --ty", ["tokenctl", "list", "--ty"]) == ["--type"])
    // login takes a type or an account to sign in to again.
    #expect(
      Set(try await world.bash("tokenctl login gi", ["tokenctl", "login", "gi"]))
        == ["gitea", "github", "gitlab", "github:gh-evil", "github:octocat", "gitlab:ada@contoso.com"])
    #expect(try await world.bash("tokenctl login oc", ["tokenctl", "login", "oc"]) == ["octocat"])
    #expect(Set(try await world.bash("tokenctl token ", ["tokenctl", "token", ""])) == Self.defaultGroupWords)
    // Readline splits words at ':' and '@' (COMP_WORDBREAKS), as bash 5.2 hands them over;
    // the candidates lose what readline keeps before its own word.
    await #expect(
      Set(try world.bash("tokenctl token graph:", ["tokenctl", "token", "graph", ":"], cur: ""))
        == ["Bob Smith", "ada@contoso.com"])
    await #expect(
      try world.bash(
        "tokenctl token graph:ada@c", ["tokenctl", "token", "graph", ":", "ada", "@", "c"], cur: "@c")
        == ["@contoso.com"])
    await #expect(
      try world.bash(
        "tokenctl refresh ada@contoso.com --gr", ["tokenctl", "refresh", "ada", "@", "contoso.com", "--gr"])
        == ["--group"])
    await #expect(
      try world.bash(
        "tokenctl allow /bin/sh octocat graph:B", ["tokenctl", "allow", "/bin/sh", "octocat", "graph", ":", "B"])
        == ["Bob Smith"])
    await #expect(
      try world.bash("tokenctl graph me --account oc", ["tokenctl", "graph", "me", "--account", "oc"]) == ["octocat"])
    // The group on the command line, else TOKENCTL_GROUP.
    let work = ["graph:wendy", "wendy"]
    await #expect(try world.bash("tokenctl token --group work ", ["tokenctl", "token", "--group", "work", ""]) == work)
    await #expect(
      try world.bash("tokenctl token ", ["tokenctl", "token", ""], environment: ["TOKENCTL_GROUP": "work"]) == work)
    await #expect(
      try world.bash("tokenctl token --group nobody ", ["tokenctl", "token", "--group", "nobody", ""]).isEmpty)
    #expect(!FileManager.default.fileExists(atPath: world.marker))
  }

  /// What each shell's own line editor makes of a TAB: the words it offered and the line
  /// it left, quoting included.
  @Test(arguments: ["bash", "zsh", "fish"])
  func theLineEditorCompletes(shell: String) async throws {
    let world = try await World()
    let all = try await world.typed("tokenctl token ", in: shell)
    // zsh reports its matches quoted for the line.
    #expect(Set(all.candidates.map { $0.replacingOccurrences(of: "\\", with: "") }) == Self.defaultGroupWords)

    let bash = shell == "bash"
    for (typed, expected) in [
      ("tokenctl to", "tokenctl token "),
      ("tokenctl list --ty", "tokenctl list --type "),
      ("tokenctl login goo", "tokenctl login google "),
      ("tokenctl login octo", "tokenctl login octocat "),
      ("tokenctl token oct", "tokenctl token octocat "),
      // `-o filenames`, which the generated script asks for, makes readline quote '@' and ':'.
      (
        "tokenctl token graph:a",
        bash ? #"tokenctl token graph:ada\@contoso.com "# : "tokenctl token graph:ada@contoso.com "
      ),
      (
        "tokenctl revoke gitl",
        bash ? #"tokenctl revoke gitlab\:ada\@contoso.com "# : "tokenctl revoke gitlab:ada@contoso.com "
      ),
      ("tokenctl graph me --account graph:B", #"tokenctl graph me --account graph:Bob\ Smith "#),
      ("tokenctl token --group work w", "tokenctl token --group work wendy "),
      ("tokenctl allow /bin/sh octocat github:gh-e", "tokenctl allow /bin/sh octocat github:gh-evil "),
    ] {
      let result = try await world.typed(typed, in: shell)
      #expect(result.line == expected, "\(shell): '\(typed)' offered \(result.candidates)")
      #expect(!result.candidates.contains { $0.contains("evil$") || $0.contains("\n") })
    }
    #expect(!FileManager.default.fileExists(atPath: world.marker))
  }

  /// Completion runs on every TAB: a locked keyring, no Secret Service or no session bus
  /// must give no words, no message on the user's command line and no prompt.
  @Test func anUnusableKeyringCompletesNothingQuietly() async throws {
    let locked = try await World()
    try await locked.session.lockLoginKeyring()
    let bare = try await PrivateSession.started(.busWithoutSecretService)
    defer { bare.stop() }
    var noBus = bare.environment
    noBus["DBUS_SESSION_BUS_ADDRESS"] = nil
    noBus["XDG_RUNTIME_DIR"] = bare.directory.path

    let request = ["---completion", "token", "--", "positional@0", "2", "0", "tokenctl", "token", ""]
    for (name, environment) in [
      ("locked", locked.environment), ("no Secret Service", bare.environment), ("no bus", noBus),
    ] {
      for shell in ["bash", "zsh", "fish"] {
        let outcome = try await BoundedRun.run(
          TestProcess.tokenctl, request, environment: environment.merging(["SAP_SHELL": shell]) { $1 }, seconds: 20)
        let result = try #require(outcome.result, "\(name), \(shell): still running after 20 s")
        // zsh's answer always ends with a blank word, which its script drops.
        let expected = shell == "zsh" ? " \n" : ""
        #expect(
          result.status == 0 && result.stdout == expected && result.stderr.isEmpty,
          "\(name), \(shell): \(result.status) \(result.stdout.debugDescription) \(result.stderr)")
      }
    }
    await #expect(try locked.bash("tokenctl token ", ["tokenctl", "token", ""]).isEmpty)
    // Types need no keyring.
    await #expect(try locked.bash("tokenctl login gith", ["tokenctl", "login", "gith"]) == ["github"])
  }

  /// `make install` calls this target with the release build: the three scripts, where
  /// each shell looks, each directory a variable of its own.
  @Test func makeInstallsTheScriptsWhereEachShellLooks() async throws {
    let destination = try TemporaryDirectory()
    var environment = ProcessInfo.processInfo.environment
    for name in ["MAKEFLAGS", "MFLAGS", "MAKELEVEL", "DESTDIR", "PREFIX"] { environment[name] = nil }
    let make = try await TestProcess.run(
      "make",
      [
        "-C", AuthServer.path(""), "--no-print-directory", "install-completions", "DESTDIR=\(destination.url.path)",
        "BINARY=\(TestProcess.tokenctl)", "PREFIX=/usr", "ZSH_COMPLETION_DIR=/opt/zsh/functions",
      ], environment: environment, mergingStandardError: true)
    try #require(make.status == 0, "\(make.stdout)")
    for (shell, path) in [
      ("bash", "/usr/share/bash-completion/completions/tokenctl"), ("zsh", "/opt/zsh/functions/_tokenctl"),
      ("fish", "/usr/share/fish/vendor_completions.d/tokenctl.fish"),
    ] {
      let file = destination.path(String(path.dropFirst()))
      let installed = try String(contentsOfFile: file, encoding: .utf8)
      let generated = try await TestProcess.run(TestProcess.tokenctl, ["--generate-completion-script", shell]).stdout
      #expect(installed == generated && !installed.isEmpty, "\(path)")
      let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
      #expect(mode == 0o644, "\(path)")
    }
  }
}
