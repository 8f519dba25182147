import SecretServiceStore

/// A session without a desktop: reached over SSH, under WSL, or with no display at all (a
/// server, a container). Nothing there starts a session bus or unlocks a keyring at
/// login, so `doctor`'s fix, and any command's hint for a keyring it cannot reach, says how
/// to get them by hand or from PAM (``keyringRecipe(_:)``), not through a desktop's tools.
struct HeadlessSession {
  enum Kind { case ssh, wsl, noDisplay }

  var kind: Kind

  init?(environment: [String: String]) {
    func isSet(_ name: String) -> Bool { !(environment[name] ?? "").isEmpty }
    if isSet("WSL_DISTRO_NAME") || isSet("WSL_INTEROP") {
      kind = .wsl
    } else if isSet("SSH_CONNECTION") || isSet("SSH_TTY") {
      // Even with X forwarding (DISPLAY set): the display is not a session of this machine.
      kind = .ssh
    } else if !isSet("DISPLAY") && !isSet("WAYLAND_DISPLAY") {
      kind = .noDisplay
    } else {
      return nil
    }
  }

  /// What kind of session this is, as a sentence's start.
  var sentence: String {
    switch kind {
    case .ssh: "This is an SSH session"
    case .wsl: "This is a WSL session"
    case .noDisplay: "This session has no desktop (neither DISPLAY nor WAYLAND_DISPLAY is set)"
    }
  }

  /// The PAM service whose login should start and unlock the keyring.
  var pamService: String { kind == .ssh ? "sshd" : "login" }

  /// How to get past `step` of the road to the keyring in this very session, in a
  /// terminal; nil for libsecret itself, which only installing it mends.
  func keyringRecipe(_ step: SecretServiceDiagnosis.Step) -> String? {
    let unlock = """
      and type the keyring's password followed by Ctrl-D (where there is no keyring yet, a new \
      password creates it)
      """
    let pam = """
      or have your login start and unlock it: `sudo apt install libpam-gnome-keyring`, then add \
      these lines to /etc/pam.d/\(pamService):
        auth optional pam_gnome_keyring.so
        session optional pam_gnome_keyring.so auto_start
      """
    switch step {
    case .library:
      return nil
    case .sessionBus:
      return """
        \(sentence): nothing started a session bus or a keyring for it. Either start \
        both for one shell:
          dbus-run-session -- sh
          gnome-keyring-daemon --unlock --components=secrets
        \(unlock);
        \(pam)
        """
    case .secretService:
      return """
        \(sentence): nothing started a keyring on its session bus. Either start one \
        (`sudo apt install gnome-keyring` first, if it is missing):
          gnome-keyring-daemon --unlock --components=secrets
        \(unlock);
        \(pam)
        """
    case .defaultCollection, .unlocked:
      // --replace: a running gnome-keyring-daemon ignores --unlock from another one (Debian
      // 12's 42.1); one that takes over opens the login keyring with the password.
      return """
        \(sentence), where no login unlocks the keyring. Either run
          gnome-keyring-daemon --replace --unlock --components=secrets
        \(unlock);
        \(pam)
        """
    }
  }
}
