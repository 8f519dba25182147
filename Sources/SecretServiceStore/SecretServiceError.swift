import CLibSecret
import GLibBus
import TokenKit

/// The errors the Secret Service can cause, each with what the user can do about it.
enum SecretServiceError {
  static func libsecretMissing(_ detail: String) -> TokenKitError {
    TokenKitError(
      .keyringUnavailable, "cannot load libsecret, through which tokenctl reaches the keyring (\(detail))",
      recovery:
        "Install libsecret: on Debian and Ubuntu, `apt install libsecret-1-0`. tokenctl never falls back to storing tokens in plain files."
    )
  }

  static func noSessionBus(_ detail: String) -> TokenKitError {
    TokenKitError(
      .keyringUnavailable, "cannot reach the D-Bus session bus: \(detail)",
      recovery:
        "tokenctl keeps tokens in the GNOME keyring (Secret Service), which it reaches over the session bus. Run it inside a desktop session, or start one with `dbus-run-session -- $SHELL`. tokenctl never falls back to storing tokens in plain files."
    )
  }

  static func noSecretService(_ detail: String) -> TokenKitError {
    TokenKitError(
      .keyringUnavailable, "no Secret Service is running on the session bus (\(detail))",
      recovery:
        "Install and start gnome-keyring (`apt install gnome-keyring`, then log in again or run `gnome-keyring-daemon --start --components=secrets`), or another Secret Service provider such as KeePassXC."
    )
  }

  static let noDefaultKeyring = TokenKitError(
    .keyringUnavailable, "the Secret Service has no default keyring to keep tokens in",
    recovery:
      "Create a login keyring: in Seahorse (Passwords and Keys) choose New › Password Keyring and make it the default, or run `gnome-keyring-daemon --unlock` and type a password followed by Ctrl-D."
  )

  static func locked(_ keyring: String) -> TokenKitError { locked([keyring], provider: nil) }

  /// The collections named are locked, and were not unlocked: no prompt could be shown
  /// (``KeyringPrompting``), or the provider unlocks only in its own window. `provider`
  /// words the remedy: each unlocks its own way.
  static func locked(_ collections: [String], provider: SecretServiceProvider?) -> TokenKitError {
    let provider = provider ?? .gnomeKeyring
    let names = collections.map(provider.naming).joined(separator: " and ")
    return TokenKitError(
      .keyringLocked,
      "\(names) \(collections.count > 1 ? "are" : "is") locked, so tokenctl cannot read or write its tokens",
      recovery: unlockRemedy(provider, collections))
  }

  /// The user (or the provider on their behalf) dismissed the provider's prompt.
  static func refused(_ collections: [String], provider: SecretServiceProvider?) -> TokenKitError {
    let provider = provider ?? .gnomeKeyring
    let names = collections.map(provider.naming).joined(separator: " and ")
    return TokenKitError(
      .keyringLocked, "\(provider.name) did not let tokenctl in: its prompt for \(names) was dismissed",
      recovery: "Run the command again and allow it when \(provider.name) asks. " + unlockRemedy(provider, collections))
  }

  /// Nobody answered the provider's prompt in time, or the provider never completed it.
  static func unanswered(
    _ collections: [String], provider: SecretServiceProvider?, after timeout: Duration
  )
    -> TokenKitError
  {
    let provider = provider ?? .gnomeKeyring
    let names = collections.map(provider.naming).joined(separator: " and ")
    return TokenKitError(
      .keyringLocked,
      "\(names) stayed locked: \(provider.name)'s prompt got no answer within \(timeout.components.seconds) s",
      recovery: unlockRemedy(provider, collections))
  }

  private static func unlockRemedy(_ provider: SecretServiceProvider, _ collections: [String]) -> String {
    let first = collections.first ?? ""
    switch provider {
    case .keePassXC:
      return """
        Unlock \(provider.naming(first)) in KeePassXC's window (`keepassxc` brings it up), then run the \
        command again from your desktop session, where tokenctl asks KeePassXC for access: allow it in \
        KeePassXC's dialog.
        """
    case .kWallet:
      return """
        Run the command again from your desktop session (DISPLAY or WAYLAND_DISPLAY set), where tokenctl \
        asks KWallet to unlock \(provider.naming(first)), or open it with `kwalletmanager5`.
        """
    case .gnomeKeyring, .other:
      // --replace: a running gnome-keyring-daemon ignores --unlock from another one (Debian
      // 12's 42.1); one that takes over opens the keyring with the password.
      return """
        Unlock it: log in to the desktop session, open Seahorse (Passwords and Keys) and unlock \
        '\(first)', or run `gnome-keyring-daemon --replace --unlock --components=secrets` and type its \
        password followed by Ctrl-D.
        """
    }
  }

  /// Maps a `GError` from a Secret Service call to a `TokenKitError`. GLib's messages name
  /// D-Bus objects and errors, never secrets, so they may be shown.
  /// `remote` is the D-Bus error name, read before the message was stripped.
  static func classify(
    _ error: UnsafeMutablePointer<GError>, remoteName remote: String?, during what: String
  )
    -> TokenKitError
  {
    let message = GLib.message(error)
    if error.pointee.domain == tokenctl_secret_error_domain(),
      error.pointee.code == Int32(SECRET_ERROR_IS_LOCKED.rawValue)
    {
      return locked("default")
    }
    // GDBus's own timeout (25 s unless the call sets one), raised locally with no D-Bus
    // name: a provider showing a dialog while it holds the call (KeePassXC's access
    // confirmation) ran past it. G_IO_ERROR_TIMED_OUT is 24 in GIO's GIOErrorEnum.
    if error.pointee.domain == tokenctl_g_io_error_quark(), error.pointee.code == 24 {
      return didNotAnswer(what)
    }
    switch remote {
    case "org.freedesktop.Secret.Error.IsLocked":
      return locked("default")
    case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
      "org.freedesktop.DBus.Error.Spawn.ChildExited", "org.freedesktop.DBus.Error.Spawn.ExecFailed",
      "org.freedesktop.DBus.Error.Spawn.Failed":
      return noSecretService(message)
    case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout":
      return didNotAnswer(what)
    default:
      return TokenKitError(.storeFailure, "the Secret Service failed while \(what): \(message)")
    }
  }

  /// The provider did not finish a new item (it dismissed the prompt it gave for it, or
  /// left the item without its attributes): nothing was stored.
  static func notCreated(_ what: String) -> TokenKitError {
    TokenKitError(
      .storeFailure, "the Secret Service did not store \(what): it did not finish the new item",
      recovery:
        "Run the command again, and allow it if the Secret Service provider (KeePassXC, kwalletd5, gnome-keyring-daemon) asks; restart the provider if it fails again."
    )
  }

  static func didNotAnswer(_ what: String) -> TokenKitError {
    TokenKitError(
      .keyringUnavailable, "the Secret Service did not answer while \(what)",
      recovery:
        "Check that the Secret Service provider (gnome-keyring-daemon, KeePassXC, kwalletd5) is running and shows no dialog, answer its dialog if it does, then run the command again."
    )
  }

  /// Whether an error named `remoteName` says that the Secret Service libsecret is bound
  /// to has left the bus.
  ///
  /// libsecret keeps one `SecretService` per process, bound to the unique bus name of the
  /// daemon that answered first. Once that daemon exits, even when a new one has taken
  /// `org.freedesktop.secrets` (gnome-keyring-daemon restarted, or `--replace`d), every
  /// call fails with `ServiceUnknown` ("The name :1.0 was not provided by any .service
  /// files"), GLib 2.74 and libsecret 0.20 as Debian 12 ships them; until libsecret is
  /// told to forget it. `NameHasNoOwner` means the same, from the bus's other methods.
  static func serviceWentAway(remoteName: String?) -> Bool {
    switch remoteName {
    case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner": true
    default: false
    }
  }
}
