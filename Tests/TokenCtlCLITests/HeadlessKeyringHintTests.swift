import Foundation
import TestSupport
import Testing

/// A command that cannot reach the keyring hints as `doctor` does: outside a desktop (over
/// SSH, or with no display), the recipe a terminal can follow; on a desktop, the store's
/// own hint, Seahorse included. Each test runs the built tokenctl on a session bus of its
/// own, as a user would, in both kinds of session.
@Suite struct HeadlessKeyringHintTests {
  /// The Secret Service as the bus starts it on first use, with no keyring yet: what
  /// `dbus-run-session -- $SHELL` over SSH leads to.
  static let keyringWithoutDefault = [
    "org.freedesktop.secrets.service":
      "[D-BUS Service]\nName=org.freedesktop.secrets\n"
      + "Exec=/usr/bin/gnome-keyring-daemon --start --foreground --components=secrets\n"
  ]

  /// An SSH session: no display of this machine.
  static let ssh: [String: String?] = [
    "SSH_CONNECTION": "10.0.0.1 50000 10.0.0.2 22", "DISPLAY": nil, "WAYLAND_DISPLAY": nil,
  ]
  /// A desktop session.
  static let desktop: [String: String?] = [
    "DISPLAY": ":0", "SSH_CONNECTION": nil, "SSH_TTY": nil, "SSH_CLIENT": nil, "WSL_DISTRO_NAME": nil,
    "WSL_INTEROP": nil,
  ]

  /// A sign-in, which checks first that the keyring can take its tokens.
  static let signIn = ["login", "oidc", "--issuer", "https://id.example", "--client-id", "app", "--device"]

  static func tokenctl(
    _ arguments: [String], in session: PrivateSession, _ changes: [String: String?]
  ) async throws -> ProcessResult {
    var environment = session.environment
    for (name, value) in changes { environment[name] = value }
    return try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
  }

  @Test func overSSHAKeyringWithoutADefaultGetsTheTerminalRecipe() async throws {
    let session = try await PrivateSession.started(.busWithoutSecretService, services: Self.keyringWithoutDefault)
    defer { session.stop() }
    let result = try await Self.tokenctl(Self.signIn, in: session, Self.ssh)
    #expect(result.status == 8, "\(result.stderr)")
    #expect(result.stderr.contains("no default keyring"), "\(result.stderr)")
    #expect(result.stderr.contains("hint: This is an SSH session"), "\(result.stderr)")
    #expect(result.stderr.contains("\n  gnome-keyring-daemon --replace --unlock --components=secrets\n"))
    #expect(result.stderr.contains("/etc/pam.d/sshd"), "\(result.stderr)")
    #expect(!result.stderr.contains("Seahorse"), "\(result.stderr)")
  }

  @Test func onADesktopAKeyringWithoutADefaultKeepsTheSeahorseHint() async throws {
    let session = try await PrivateSession.started(.busWithoutSecretService, services: Self.keyringWithoutDefault)
    defer { session.stop() }
    let result = try await Self.tokenctl(Self.signIn, in: session, Self.desktop)
    #expect(result.status == 8, "\(result.stderr)")
    #expect(result.stderr.contains("no default keyring"), "\(result.stderr)")
    #expect(result.stderr.contains("Seahorse"), "\(result.stderr)")
    #expect(!result.stderr.contains("This is an SSH session"), "\(result.stderr)")
  }

  /// With no session bus over SSH, the hint starts a keyring with the bus: the bus alone
  /// would lead to the hint above next.
  @Test func overSSHNoSessionBusGetsTheRecipeThatStartsAKeyringToo() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    var changes = Self.ssh
    // No address, and no bus at $XDG_RUNTIME_DIR/bus, GLib's other place to look.
    changes["DBUS_SESSION_BUS_ADDRESS"] = .some(nil)
    changes["XDG_RUNTIME_DIR"] = session.directory.appendingPathComponent("home").path
    changes["TOKENCTL_AGENT_SOCKET"] = .some(nil)
    let result = try await Self.tokenctl(["list"], in: session, changes)
    #expect(result.status == 8, "\(result.stderr)")
    #expect(result.stderr.contains("cannot reach the D-Bus session bus"), "\(result.stderr)")
    #expect(
      result.stderr.contains("\n  dbus-run-session -- sh\n  gnome-keyring-daemon --unlock --components=secrets\n"))
    #expect(!result.stderr.contains("desktop session, or start one"), "\(result.stderr)")
  }

  @Test func onADesktopNoSessionBusKeepsTheStoresHint() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    var changes = Self.desktop
    changes["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + session.directory.appendingPathComponent("no-bus").path
    changes["TOKENCTL_AGENT_SOCKET"] = .some(nil)
    let result = try await Self.tokenctl(["list"], in: session, changes)
    #expect(result.status == 8, "\(result.stderr)")
    #expect(result.stderr.contains("dbus-run-session -- $SHELL"), "\(result.stderr)")
  }
}
