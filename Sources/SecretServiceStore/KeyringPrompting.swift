/// Whether the store may ask the Secret Service to unlock, and so show its prompt, and
/// how it tells the user that a prompt is waiting for them.
///
/// A provider unlocks only through `Unlock` and, where it asks the user, the prompt it
/// returns (Secret Service API, "Prompts and Prompting"): gnome-keyring asks for the
/// keyring's password, KeePassXC for the database's password or for its access
/// confirmation (on by default: each new program must be allowed), KWallet unlocks its
/// open wallet's collection without asking. Without a `KeyringPrompting` the store never
/// unlocks and reports the collection locked: where nobody can see the prompt (no
/// display), waiting on one would hang.
public struct KeyringPrompting: Sendable {
  /// Called with the provider's name just before the store waits on a prompt.
  public var notice: @Sendable (_ provider: String) -> Void
  /// How long the store waits for the user's answer before it dismisses the prompt and
  /// reports the keyring locked. A provider may also never answer: KeePassXC 2.7.4, asked
  /// to unlock a database whose unlock dialog the user just cancelled, shows nothing and
  /// never completes the prompt (``SecretServiceQuirk/leavesPromptsUnanswered``).
  public var timeout: Duration

  /// Two minutes: time to find the dialog, switch to it and type a password.
  public static let defaultTimeout = Duration.seconds(120)

  public init(timeout: Duration = defaultTimeout, notice: @escaping @Sendable (_ provider: String) -> Void) {
    self.timeout = timeout
    self.notice = notice
  }

  /// Prompting when the environment has a display for the provider's dialog: the
  /// variables a desktop session sets.
  public static func whereDisplayed(
    _ environment: [String: String], notice: @escaping @Sendable (_ provider: String) -> Void
  ) -> KeyringPrompting? {
    let display = ["DISPLAY", "WAYLAND_DISPLAY"].contains { !(environment[$0] ?? "").isEmpty }
    return display ? KeyringPrompting(notice: notice) : nil
  }
}
