import CLibSecret
import GLibBus
import Synchronization
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// `Unlock` and its prompt, run over the bus by the store rather than by libsecret.
///
/// libsecret calls a prompt's `Prompt` method with GDBus's default timeout, 25 s, and
/// KeePassXC 2.7 holds that call while its dialog is up: a user who took longer than 25 s
/// got "Timeout was reached". Here `Prompt` has no timeout; the answer is its `Completed`
/// signal (Secret Service API, org.freedesktop.Secret.Prompt), subscribed to before the
/// call so that it cannot be missed, from the unique name we called and nobody else, and
/// delivered on a loop thread of its own (`MainLoopThread`).
enum SecretServiceUnlock {
  /// Unlocks the objects at `paths` (collections or items), running the prompt when the
  /// provider returns one; throws `locked` or `refused` when they stay locked.
  static func unlock(
    _ paths: [String], names: [String], bus: SecretServiceBus, prompting: KeyringPrompting?
  ) throws {
    let provider = SecretServiceProvider.owning(bus: bus.connection)
    guard let prompting else { throw SecretServiceError.locked(names, provider: provider) }
    let reply = try bus.callService(
      "Unlock", [SecretServiceBus.objectPaths(paths)], replyType: "(aoo)", what: "unlocking the keyring")
    let prompt = Variant.string(reply, 1)
    tokenctl_g_variant_unref(reply)
    if prompt == "/" { return }

    let outcome = PromptOutcome()
    // Named for `ps -L`, as the monitor's thread is.
    let loop = MainLoopThread(name: "keyring-prompt")
    loop.subscribe(
      on: DBusConnection(pointer: bus.connection), sender: bus.name, interface: promptInterface, member: "Completed",
      path: prompt
    ) { signal in
      // (bv): whether the prompt was dismissed, and a result the store does not read. A
      // body of any other type is not an answer.
      guard case .tuple(let body) = signal.body, case .boolean(let dismissed)? = body.first else { return }
      outcome.dismissed.withLock { $0 = dismissed }
    }
    do {
      try loop.start()
    } catch {
      throw TokenKitError(
        .internalFailure, "cannot start the thread that waits on the keyring's prompt: \(error.message)")
    }
    defer { loop.stop() }
    prompting.notice(provider?.name ?? "your keyring")
    let deadline = ContinuousClock.now + prompting.timeout
    let milliseconds = prompting.timeout.components.seconds * 1000
    // The window id is empty: a command line has no window for the dialog to sit over.
    let answered = try bus.call(
      prompt, promptInterface, "Prompt", BusValue.tuple([.string("")]).variant(), replyType: "()",
      timeout: Int32(clamping: milliseconds), what: "unlocking the keyring")
    tokenctl_g_variant_unref(answered)
    // Polled, so that the deadline holds when no signal comes at all.
    while true {
      if let dismissed = outcome.dismissed.withLock({ $0 }) {
        if dismissed { throw SecretServiceError.refused(names, provider: provider) }
        return
      }
      if ContinuousClock.now >= deadline {
        if let dismissed = try? bus.call(
          prompt, promptInterface, "Dismiss", nil, replyType: "()", timeout: 5000, what: "unlocking the keyring")
        {
          tokenctl_g_variant_unref(dismissed)
        }
        throw SecretServiceError.unanswered(names, provider: provider, after: prompting.timeout)
      }
      usleep(50_000)
    }
  }

  private static let promptInterface = "org.freedesktop.Secret.Prompt"

  /// Where the `Completed` signal's handler, on the loop's thread, leaves whether the
  /// prompt was dismissed.
  private final class PromptOutcome: Sendable {
    let dismissed = Mutex<Bool?>(nil)
  }
}
