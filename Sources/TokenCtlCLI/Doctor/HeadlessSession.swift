/// A session without a desktop: reached over SSH, under WSL, or with no display at all (a
/// server, a container). Nothing there starts a session bus or unlocks a keyring at
/// login, so `doctor`'s fix says how to get them by hand or from PAM.
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
}
