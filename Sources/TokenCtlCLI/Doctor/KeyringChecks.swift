import SecretServiceStore
import TokenKit

/// The road to the keyring as checks: libsecret, the session bus, the Secret Service, the
/// default collection and its lock, up to the first step that fails (the later ones
/// cannot be asked). The failures are worded as the commands word them; where there is no
/// desktop session, the fix says how to get a keyring anyway.
enum KeyringChecks {
  static func checks(_ diagnosis: SecretServiceDiagnosis, environment: [String: String]) -> [DoctorCheck] {
    typealias Step = SecretServiceDiagnosis.Step
    let steps: [(Step, id: String, title: String)] = [
      (.library, "libsecret", "libsecret"),
      (.sessionBus, "session-bus", "Session bus"),
      (.secretService, "secret-service", "Secret Service"),
      (.defaultCollection, "default-keyring", "Default keyring"),
      (.unlocked, "keyring-unlocked", "Keyring unlocked"),
    ]
    var checks: [DoctorCheck] = []
    for (step, id, title) in steps {
      if let failure = diagnosis.failure, failure.step == step, step == .unlocked, diagnosis.program == .kWallet {
        // KWallet's Secret Service collection reports Locked until a program unlocks it,
        // even with the wallet open after login; tokenctl's first read unlocks it, with
        // no dialog while the wallet is open. Not a failure, but no listing either.
        let label = diagnosis.defaultCollection ?? "kdewallet"
        checks.append(
          .warn(
            id, title,
            "'\(label)' is locked: KWallet keeps its Secret Service collection locked until a program unlocks it, "
              + "and tokenctl unlocks it on first use (no dialog while the wallet is open)",
            fix: "Nothing to do; `tokenctl list` unlocks it now."))
        break
      }
      if let failure = diagnosis.failure, failure.step == step {
        checks.append(
          .fail(id, title, detail(of: failure.error, at: step, environment), fix: fix(for: failure, environment)))
        break
      }
      checks.append(.ok(id, title, passed(step, diagnosis, environment)))
    }
    return checks
  }

  private static func passed(
    _ step: SecretServiceDiagnosis.Step, _ diagnosis: SecretServiceDiagnosis, _ environment: [String: String]
  ) -> String {
    switch step {
    case .library: return "loaded (libsecret-1.so.0)"
    case .sessionBus:
      guard let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty else {
        return "connected; DBUS_SESSION_BUS_ADDRESS is not set, so GLib found the bus itself ($XDG_RUNTIME_DIR/bus)"
      }
      return "connected (DBUS_SESSION_BUS_ADDRESS=\(address))"
    case .secretService:
      switch diagnosis.provider {
      case .running(let owner):
        guard let program = diagnosis.program else { return "org.freedesktop.secrets is owned by \(owner)" }
        return "org.freedesktop.secrets is owned by \(owner): \(program.name)"
      case .activatable, nil: return "org.freedesktop.secrets is not running yet; the bus starts it on first use"
      }
    case .defaultCollection:
      return "the 'default' alias names the keyring '\(diagnosis.defaultCollection ?? "default")'"
    case .unlocked:
      let unlocked = "'\(diagnosis.defaultCollection ?? "default")' is unlocked"
      switch diagnosis.program {
      case .keePassXC:
        // Unlocked is not enough there: KeePassXC asks the user to allow each program
        // that reads an entry it did not write (its access confirmation, on by default).
        return unlocked
          + "; KeePassXC asks you to allow tokenctl the first time it reads an entry, and tokenctl waits for that dialog"
      case .kWallet:
        return unlocked + "; KWallet's collection may lock again, and tokenctl unlocks it when it runs"
      default:
        return unlocked
      }
    }
  }

  private static func detail(
    of error: TokenKitError, at step: SecretServiceDiagnosis.Step, _ environment: [String: String]
  ) -> String {
    guard step == .sessionBus, environment["DBUS_SESSION_BUS_ADDRESS"]?.isEmpty ?? true else { return error.message }
    return error.message + " (DBUS_SESSION_BUS_ADDRESS is not set)"
  }

  /// The store's own recovery, except where there is no desktop to start a bus or a
  /// keyring: then how to get them in this very session.
  private static func fix(
    for failure: (step: SecretServiceDiagnosis.Step, error: TokenKitError), _ environment: [String: String]
  ) -> String {
    if let session = HeadlessSession(environment: environment), let recipe = session.keyringRecipe(failure.step) {
      return recipe
    }
    return RemedyWording.recovery(for: failure.error) ?? "Run `tokenctl list` to see the keyring's own error."
  }
}
