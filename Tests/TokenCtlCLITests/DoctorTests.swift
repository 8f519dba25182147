import Foundation
import TestSupport
import Testing

/// `tokenctl doctor` against real parts, one failure at a time: each test has a session
/// bus of its own (with or without a keyring), a home with its own config.toml, type files
/// and git configuration, and runs the built tokenctl as a user would. Each asserts the
/// check's status and the fix it prints, and where the fix is a command, runs it and sees
/// the check pass.
@Suite struct DoctorTests {
  /// One check of `doctor --json`.
  struct Check {
    var status: String
    var detail: String
    var fix: String?
  }

  /// A private session, with git reading only the home's configuration and finding
  /// git-credential-tokenctl beside tokenctl.
  final class World {
    let session: PrivateSession
    var environment: [String: String]
    var home: URL { URL(fileURLWithPath: session.environment["HOME"]!) }
    var gitConfig: String { home.appendingPathComponent("gitconfig").path }
    var configFolder: URL { home.appendingPathComponent(".config/tokenctl") }

    init(_ kind: PrivateSession.Kind) async throws {
      session = try await PrivateSession.started(kind)
      environment = session.environment
      environment["GIT_CONFIG_NOSYSTEM"] = "1"
      environment["GIT_CONFIG_GLOBAL"] = home.appendingPathComponent("gitconfig").path
      let programs = URL(fileURLWithPath: TestProcess.tokenctl).deletingLastPathComponent().path
      environment["PATH"] = programs + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    }

    deinit { session.stop() }

    /// Writes `text` at `path` under `~/.config/tokenctl`, with `mode`.
    @discardableResult
    func write(_ text: String, to path: String, mode: Int = 0o600) throws -> String {
      let file = configFolder.appendingPathComponent(path)
      try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
      try text.write(to: file, atomically: true, encoding: .utf8)
      try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
      return file.path
    }

    func git(_ arguments: String...) async throws -> ProcessResult {
      try await TestProcess.run("git", arguments, environment: environment)
    }

    func tokenctl(_ arguments: [String], environment extra: [String: String?] = [:]) async throws -> ProcessResult {
      var environment = environment
      for (name, value) in extra { environment[name] = value }
      return try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
    }

    /// `tokenctl doctor --json ARGUMENTS`: its exit status and checks by id, in order.
    func doctor(
      _ arguments: [String] = [], environment extra: [String: String?] = [:]
    ) async throws -> (status: Int32, checks: [String: Check], ids: [String], ok: Bool) {
      let result = try await tokenctl(["doctor", "--json"] + arguments, environment: extra)
      guard let document = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
        document["format"] as? Int == 1, let ok = document["ok"] as? Bool,
        let list = document["checks"] as? [[String: Any]]
      else { throw TestFailure("doctor --json printed \(result.stdout) \(result.stderr)") }
      var checks: [String: Check] = [:]
      var ids: [String] = []
      for item in list {
        guard let id = item["id"] as? String, let status = item["status"] as? String,
          let detail = item["detail"] as? String, item["title"] is String, item.keys.contains("fix")
        else { throw TestFailure("a check lacks a field: \(item)") }
        checks[id] = Check(status: status, detail: detail, fix: item["fix"] as? String)
        ids.append(id)
      }
      return (result.status, checks, ids, ok)
    }
  }

  // MARK: All well

  @Test func aHealthyPrivateKeyringPassesEveryCheck() async throws {
    let world = try await World(.unlockedKeyring)
    try world.write("[types.gitlab]\nclient_id = \"gitlab-app\"\n", to: "config.toml")
    #expect(try await world.tokenctl(["setup-git", "--host", "gitlab.com"]).status == 0)
    let (status, checks, ids, ok) = try await world.doctor()
    #expect(status == 0 && ok)
    #expect(
      ids == [
        "libsecret", "session-bus", "secret-service", "default-keyring", "keyring-unlocked", "config", "type-files",
        "client-id:gitlab", "git:https://gitlab.com", "git-helper-program", "agent", "libcurl",
      ])
    #expect(checks.values.allSatisfy { $0.status == "ok" && $0.fix == nil }, "\(checks)")
    #expect(checks["keyring-unlocked"]?.detail == "'Login' is unlocked")

    // The text says the same, uncoloured where NO_COLOR asks.
    let text = try await world.tokenctl(["doctor"])
    #expect(text.status == 0)
    #expect(text.stdout.hasSuffix("All 12 checks passed.\n"), "\(text.stdout)")
    #expect(text.stdout.contains("ok    Session bus: connected"))
  }

  @Test func colourIsOnlyForATerminalAndNeverWithNoColor() async throws {
    let world = try await World(.unlockedKeyring)
    // script(1) gives doctor a terminal for its standard output.
    let command = "\(TestProcess.tokenctl) doctor"
    let onTerminal = try await TestProcess.run(
      "script", ["-qec", command, "/dev/null"], environment: world.environment.merging(["NO_COLOR": ""]) { $1 })
    #expect(onTerminal.stdout.contains("\u{1B}[32mok  \u{1B}[0m"), "\(onTerminal.stdout)")
    let plain = try await TestProcess.run("script", ["-qec", command, "/dev/null"], environment: world.environment)
    #expect(!plain.stdout.contains("\u{1B}["), "\(plain.stdout)")
  }

  // MARK: The keyring

  @Test func noSessionBusOnAMachineWithoutADesktopSaysHowToStartOne() async throws {
    let world = try await World(.unlockedKeyring)
    // No address, and no bus at $XDG_RUNTIME_DIR/bus, GLib's other place to look.
    let (status, checks, ids, ok) = try await world.doctor(environment: [
      "DBUS_SESSION_BUS_ADDRESS": nil, "XDG_RUNTIME_DIR": world.home.path, "SSH_CONNECTION": "10.0.0.1 5 10.0.0.2 22",
    ])
    #expect(status == 1 && !ok)
    let bus = try #require(checks["session-bus"])
    #expect(bus.status == "fail")
    #expect(bus.detail.contains("cannot reach the D-Bus session bus") && bus.detail.contains("not set"))
    let fix = try #require(bus.fix)
    #expect(fix.contains("This is an SSH session"))
    #expect(fix.contains("dbus-run-session -- sh"))
    #expect(fix.contains("gnome-keyring-daemon --unlock --components=secrets"))
    #expect(fix.contains("pam_gnome_keyring.so") && fix.contains("/etc/pam.d/sshd"))
    // Nothing after the bus can be asked; the rest still is.
    #expect(!ids.contains("secret-service") && ids.contains("config") && ids.contains("libcurl"))
  }

  @Test func aDeadBusSocketOnADesktopGetsTheStoresOwnFix() async throws {
    let world = try await World(.unlockedKeyring)
    let dead = world.home.appendingPathComponent("no-bus").path
    let (status, checks, _, _) = try await world.doctor(environment: [
      "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dead)", "DISPLAY": ":0",
    ])
    #expect(status == 1)
    let bus = try #require(checks["session-bus"])
    #expect(bus.status == "fail" && bus.detail.contains("cannot reach the D-Bus session bus"), "\(bus)")
    #expect(bus.fix?.contains("dbus-run-session -- $SHELL") == true, "\(bus)")
    #expect(bus.fix?.contains("pam_gnome_keyring") == false)
  }

  @Test func aBusWithoutSecretServiceSaysHowToStartAKeyring() async throws {
    let world = try await World(.busWithoutSecretService)
    let (status, checks, ids, _) = try await world.doctor()
    #expect(status == 1)
    #expect(checks["session-bus"]?.status == "ok")
    let service = try #require(checks["secret-service"])
    #expect(service.status == "fail")
    #expect(service.detail.contains("no Secret Service is running"), "\(service.detail)")
    #expect(service.fix?.contains("This session has no desktop") == true)
    #expect(service.fix?.contains("gnome-keyring-daemon --unlock --components=secrets") == true)
    #expect(!ids.contains("default-keyring"))
  }

  @Test func aLockedKeyringFailsAndTheFixUnlocksIt() async throws {
    let world = try await World(.unlockedKeyring)
    try await world.session.lockLoginKeyring()
    let (status, checks, _, _) = try await world.doctor()
    #expect(status == 1)
    #expect(checks["default-keyring"]?.status == "ok")
    let locked = try #require(checks["keyring-unlocked"])
    #expect(locked.status == "fail" && locked.detail.contains("'Login' is locked"), "\(locked)")
    let fix = try #require(locked.fix)
    #expect(fix.contains("gnome-keyring-daemon --replace --unlock --components=secrets"), "\(fix)")

    // The fix, with the test keyring's password on standard input.
    try await world.session.restartKeyring()
    #expect(try await world.doctor().checks["keyring-unlocked"]?.status == "ok")
  }

  /// The store's own hint for a locked keyring (a command's, with or without the agent),
  /// run through /bin/sh as printed with the password on standard input, unlocks the
  /// daemon that runs (`gnome-keyring-daemon --unlock` alone would leave it locked).
  @Test func theLockedKeyringsHintUnlocksTheRunningDaemon() async throws {
    let world = try await World(.unlockedKeyring)
    try await world.session.lockLoginKeyring()
    let locked = try await world.tokenctl(["list"], environment: ["DISPLAY": nil, "WAYLAND_DISPLAY": nil])
    #expect(locked.status != 0)
    let hint = try #require(locked.stderr.split(separator: "\n").first { $0.hasPrefix("hint: ") }, "\(locked.stderr)")
    let command = try #require(hint.split(separator: "`").dropFirst().first, "\(hint)")
    #expect(command.hasPrefix("gnome-keyring-daemon"), "\(hint)")
    let unlock = try await TestProcess.run(
      "/bin/sh", ["-c", String(command)], environment: world.environment, stdin: "tokenctl-test")
    #expect(unlock.status == 0, "\(unlock.stderr)")
    // The daemon that takes over needs a moment to own the Secret Service's name.
    var listed = try await world.tokenctl(["list"])
    for _ in 0..<50 where listed.status != 0 {
      try await Task.sleep(for: .milliseconds(100))
      listed = try await world.tokenctl(["list"])
    }
    #expect(listed.status == 0, "\(listed.stderr)")
  }

  // MARK: Settings

  @Test func aTypeFileOthersMayChangeIsRefusedWithTheChmodToRun() async throws {
    let world = try await World(.unlockedKeyring)
    let path = try world.write(
      "id = \"corp\"\ndisplay_name = \"Corp\"\nissuer = \"https://id.example.org\"\nclient_id = \"corp-app\"\n",
      to: "types/corp.toml", mode: 0o666)
    let (status, checks, _, _) = try await world.doctor()
    #expect(status == 1)
    let files = try #require(checks["type-files"])
    #expect(files.status == "fail")
    #expect(files.detail.contains("\(path) may be changed by other users (mode 666"), "\(files.detail)")
    #expect(files.fix == "Run `chmod go-w \(path)`.")
    // The type is skipped, so it is not in use.
    #expect(checks["client-id:corp"] == nil)

    #expect(chmod(path, 0o600) == 0)
    let fixed = try await world.doctor()
    #expect(fixed.checks["type-files"]?.status == "ok")
    #expect(fixed.checks["client-id:corp"]?.status == "ok")
  }

  @Test func aTypeFileOfAnotherUserIsRefused() async throws {
    try #require(geteuid() == 0, "only root can give a file away")
    let world = try await World(.unlockedKeyring)
    let path = try world.write(
      "id = \"corp\"\ndisplay_name = \"Corp\"\nissuer = \"https://id.example.org\"\n", to: "types/corp.toml")
    #expect(chown(path, 65534, 65534) == 0)
    let files = try #require(try await world.doctor().checks["type-files"])
    #expect(files.status == "fail" && files.detail.contains("belongs to another user"), "\(files)")
    #expect(files.fix?.contains("sudo chown") == true, "\(files)")
  }

  @Test func invalidTOMLIsShownWithItsPlace() async throws {
    let world = try await World(.unlockedKeyring)
    let type = try world.write("id = \"corp\"\ndisplay_name = \n", to: "types/corp.toml")
    let config = try world.write("[types.gitlab\nclient_id = \"x\"\n", to: "config.toml")
    let (status, checks, _, _) = try await world.doctor()
    #expect(status == 1)
    let files = try #require(checks["type-files"])
    #expect(files.status == "fail" && files.detail.contains("\(type):2:"), "\(files.detail)")
    #expect(files.fix?.contains("tokenctl types --check \(type)") == true)
    let configuration = try #require(checks["config"])
    #expect(configuration.status == "fail" && configuration.detail.contains("\(config):1:"), "\(configuration)")
    #expect(configuration.fix?.contains("tokenctl-config(5)") == true)
  }

  @Test func aConfigFileOthersMayChangeGetsItsChmod() async throws {
    let world = try await World(.unlockedKeyring)
    let config = try world.write("[types.gitlab]\nclient_id = \"x\"\n", to: "config.toml", mode: 0o664)
    let check = try #require(try await world.doctor().checks["config"])
    #expect(check.status == "fail" && check.fix == "Run `chmod go-w \(config)`.", "\(check)")
  }

  @Test func aMissingClientIDFailsWithTheLineToAddUnlessTheTypeCanRegister() async throws {
    let world = try await World(.unlockedKeyring)
    let config = try world.write(
      """
      [types.gitlab]
      scopes = ["read_user"]

      [types.oidc]
      issuer = "https://id.example.org"
      """, to: "config.toml")
    let (status, checks, _, _) = try await world.doctor()
    #expect(status == 1)
    let gitlab = try #require(checks["client-id:gitlab"])
    #expect(gitlab.status == "fail" && gitlab.detail.contains("signing in with gitlab fails"), "\(gitlab)")
    #expect(gitlab.fix?.contains(config) == true)
    #expect(gitlab.fix?.contains("[types.gitlab]\n  client_id = \"…\"") == true, "\(gitlab)")
    // A type that discovers its endpoints may register itself at the first sign-in.
    let oidc = try #require(checks["client-id:oidc"])
    #expect(oidc.status == "warn" && oidc.detail.contains("dynamic client registration"), "\(oidc)")
    #expect(oidc.fix?.contains("[types.oidc]\n  client_id = \"…\"") == true, "\(oidc)")
    // Types nobody uses are not checked.
    #expect(checks["client-id:graph"] == nil)
  }

  // MARK: git

  @Test func anotherHelperBeforeTokenctlIsAWarningAndTheFixPutsTokenctlFirst() async throws {
    let world = try await World(.unlockedKeyring)
    try world.write("[types.gitlab]\nclient_id = \"gitlab-app\"\n", to: "config.toml")
    let log = world.home.appendingPathComponent("helpers.log").path
    // A helper that only records that git asked it, configured for every URL.
    #expect(try await world.git("config", "--global", "credential.helper", "!echo other >>\(log); :").status == 0)
    #expect(try await world.tokenctl(["setup-git", "--host", "gitlab.com"]).status == 0)

    let before = try #require(try await world.doctor().checks["git:https://gitlab.com"])
    #expect(before.status == "warn", "\(before)")
    #expect(before.detail.contains("(credential.helper, global) before tokenctl"), "\(before.detail)")
    // Real git agrees: it asks the other helper.
    try await askGit(world, log: log)
    #expect((try? String(contentsOfFile: log, encoding: .utf8)) == "other\n")

    let fix = try #require(before.fix)
    let commands = fix.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
      $0.hasPrefix("git config")
    }
    #expect(commands.count == 3, "\(fix)")
    for command in commands {
      #expect(
        try await TestProcess.run("sh", ["-c", command], environment: world.environment).status == 0, "\(command)")
    }
    let after = try #require(try await world.doctor().checks["git:https://gitlab.com"])
    #expect(after.status == "ok" && after.detail.contains("git asks tokenctl first"), "\(after)")
    try FileManager.default.removeItem(atPath: log)
    try await askGit(world, log: log)
    #expect(!FileManager.default.fileExists(atPath: log), "git still asked the other helper")
  }

  /// `git credential fill` for https://gitlab.com, with nobody to type a password.
  private func askGit(_ world: World, log: String) async throws {
    var environment = world.environment
    environment["GIT_TERMINAL_PROMPT"] = "0"
    environment["TOKENCTL_AGENT"] = "0"
    _ = try await TestProcess.run(
      "git", ["credential", "fill"], environment: environment, stdin: "protocol=https\nhost=gitlab.com\n\n")
  }

  @Test func aHostWithoutTokenctlOrWithTokenctlClearedIsAWarning() async throws {
    let world = try await World(.unlockedKeyring)
    try world.write("[types.gitlab]\nclient_id = \"gitlab-app\"\n", to: "config.toml")
    let missing = try #require(try await world.doctor().checks["git:https://gitlab.com"])
    #expect(missing.status == "warn" && missing.fix == "Run `tokenctl setup-git --host gitlab.com`.", "\(missing)")

    #expect(try await world.tokenctl(["setup-git", "--host", "gitlab.com"]).status == 0)
    // An empty value read after tokenctl's line clears it (git-config(1): a later file).
    let repository = world.home.appendingPathComponent("repo").path
    #expect(try await world.git("init", "-q", repository).status == 0)
    #expect(try await world.git("-C", repository, "config", "--local", "credential.helper", "").status == 0)
    var inRepository = world.environment
    inRepository["GIT_DIR"] = repository + "/.git"
    let result = try await TestProcess.run(TestProcess.tokenctl, ["doctor", "--json"], environment: inRepository)
    let document = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    let check = (document?["checks"] as? [[String: Any]])?.first { $0["id"] as? String == "git:https://gitlab.com" }
    #expect(check?["status"] as? String == "warn")
    #expect((check?["detail"] as? String)?.contains("cleared by an empty credential.helper (local)") == true)
    let fix = try #require(check?["fix"] as? String)
    #expect(
      fix
        == "Remove the empty line, if tokenctl should answer: `git config --local --unset-all credential.helper '^$'`.")
    let command = String(fix.split(separator: "`")[1])
    #expect(try await TestProcess.run("sh", ["-c", command], environment: inRepository).status == 0)
    let fixed = try await TestProcess.run(TestProcess.tokenctl, ["doctor"], environment: inRepository)
    #expect(fixed.stdout.contains("ok    git for https://gitlab.com: git asks tokenctl first"), "\(fixed.stdout)")
  }

  @Test func aLoopbackForgeIsCheckedOverBothSchemesTheHelperAnswers() async throws {
    let world = try await World(.unlockedKeyring)
    let forge = UserTypeFile(
      id: "forge", displayName: "Loopback forge", issuer: "http://127.0.0.1:9", clientID: "forge-app",
      gitHosts: ["127.0.0.1:3000"])
    try world.write(forge.text, to: "types/forge.toml")
    let before = try await world.doctor()
    #expect(before.checks["git:https://127.0.0.1:3000"]?.status == "warn")
    #expect(before.checks["git:http://127.0.0.1:3000"]?.status == "warn")
    #expect(try await world.tokenctl(["setup-git", "--host", "127.0.0.1:3000"]).status == 0)
    let after = try await world.doctor()
    #expect(after.checks["git:https://127.0.0.1:3000"]?.status == "ok")
    #expect(after.checks["git:http://127.0.0.1:3000"]?.status == "ok")
  }

  // MARK: libcurl

  /// The dynamic loader finds an empty libcurl.so.4 first, as it would a broken install.
  @Test func libcurlThatCannotBeLoadedFails() async throws {
    let world = try await World(.unlockedKeyring)
    let libraries = try TemporaryDirectory()
    try Data().write(to: URL(fileURLWithPath: libraries.path("libcurl.so.4")))
    let (status, checks, _, _) = try await world.doctor(environment: ["LD_LIBRARY_PATH": libraries.url.path])
    #expect(status == 1)
    let curl = try #require(checks["libcurl"])
    #expect(curl.status == "fail" && curl.detail.contains("cannot load libcurl"), "\(curl)")
    #expect(curl.fix == "Install it: `sudo apt install libcurl4`.")
  }

  // MARK: --online

  @Test func aServerWhoseClockDiffersIsAWarningWithTheNTPFix() async throws {
    let (base, _) = try await LoopbackService.start(
      "Tests/Support/stub-oauth-server.py", info: "stub.json", arguments: ["--clock-offset", "-300"])
    let world = try await World(.unlockedKeyring)
    try world.write("[types.oidc]\nissuer = \"\(base)\"\nclient_id = \"stub\"\n", to: "config.toml")
    let offline = try await world.doctor()
    #expect(offline.checks["discovery:\(base)"] == nil && offline.checks["clock"] == nil)

    let (status, checks, _, _) = try await world.doctor(["--online"])
    #expect(status == 0)
    #expect(checks["discovery:\(base)"]?.status == "ok", "\(checks)")
    let clock = try #require(checks["clock"])
    #expect(clock.status == "warn", "\(clock)")
    #expect(clock.detail.contains("s ahead of 127.0.0.1's"), "\(clock.detail)")
    #expect(clock.fix?.contains("timedatectl set-ntp true") == true)
  }

  @Test func aServerThatAgreesOnTheTimePasses() async throws {
    let (base, _) = try await LoopbackService.start(
      "Tests/Support/stub-oauth-server.py", info: "stub.json", arguments: [])
    let world = try await World(.unlockedKeyring)
    try world.write("[types.oidc]\nissuer = \"\(base)\"\nclient_id = \"stub\"\n", to: "config.toml")
    let (status, checks, _, ok) = try await world.doctor(["--online"])
    #expect(status == 0 && ok)
    #expect(checks["clock"]?.status == "ok", "\(checks)")
  }

  @Test func anUntrustedCertificateFailsDiscoveryWithTheTrustStoreFix() async throws {
    let (base, _) = try await LoopbackService.start(
      "Tests/Support/tls-server.py", info: "tls-server.json", arguments: [])
    let world = try await World(.unlockedKeyring)
    try world.write("[types.oidc]\nissuer = \"\(base)\"\nclient_id = \"tls\"\n", to: "config.toml")
    let (status, checks, _, _) = try await world.doctor(["--online"])
    #expect(status == 1)
    let discovery = try #require(checks["discovery:\(base)"])
    #expect(discovery.status == "fail" && discovery.detail.contains("TLS"), "\(discovery)")
    #expect(discovery.fix?.contains("sudo update-ca-certificates") == true)
  }
}

/// The Secret Service as the bus starts it on first use (D-Bus activation), in a session
/// with no keyring yet and with a service file that cannot start.
@Suite struct DoctorActivationTests {
  static func service(_ exec: String) -> [String: String] {
    ["org.freedesktop.secrets.service": "[D-BUS Service]\nName=org.freedesktop.secrets\nExec=\(exec)\n"]
  }

  @Test func anActivatableServiceWithoutAKeyringHasNoDefaultKeyring() async throws {
    let session = try await PrivateSession.started(
      .busWithoutSecretService,
      services: Self.service("/usr/bin/gnome-keyring-daemon --start --foreground --components=secrets"))
    defer { session.stop() }
    let result = try await session.tokenctl("doctor")
    #expect(result.status == 1)
    // A session of `make test`'s agent run has an agent, which may have started the service
    // by now.
    let notYet = "ok    Secret Service: org.freedesktop.secrets is not running yet; the bus starts it"
    let started = "ok    Secret Service: org.freedesktop.secrets is owned by"
    let withAgent = ProcessInfo.processInfo.environment["TOKENCTL_TEST_AGENT"] == "1"
    #expect(
      result.stdout.contains(notYet) || (withAgent && result.stdout.contains(started)), "\(result.stdout)")
    #expect(
      result.stdout.contains("fail  Default keyring: the Secret Service has no default keyring"), "\(result.stdout)")
    #expect(result.stdout.contains("gnome-keyring-daemon --replace --unlock --components=secrets"))
  }

  @Test func aServiceThatCannotStartFails() async throws {
    let session = try await PrivateSession.started(.busWithoutSecretService, services: Self.service("/bin/false"))
    defer { session.stop() }
    let result = try await session.tokenctl("doctor")
    #expect(result.status == 1)
    #expect(result.stdout.contains("fail  Secret Service: no Secret Service is running"), "\(result.stdout)")
    #expect(!result.stdout.contains("Default keyring"))
  }
}
