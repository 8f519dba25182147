import CLibSecret
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
/// call so that it cannot be missed, from the unique name we called and nobody else.
enum SecretServiceUnlock {
  /// Unlocks the objects at `paths` (collections or items), running the prompt when the
  /// provider returns one; throws `locked` or `refused` when they stay locked.
  static func unlock(
    _ paths: [String], names: [String], bus: SecretServiceBus, prompting: KeyringPrompting?
  ) throws {
    let connection = bus.connection
    let provider = SecretServiceProvider.owning(bus: connection)
    guard let prompting else { throw SecretServiceError.locked(names, provider: provider) }
    let busName = bus.name
    let reply = try bus.callService(
      "Unlock", [SecretServiceBus.objectPaths(paths)], replyType: "(aoo)", what: "unlocking the keyring")
    defer { tokenctl_g_variant_unref(reply) }
    let promptValue = tokenctl_g_variant_get_child_value(reply, 1)!
    defer { tokenctl_g_variant_unref(promptValue) }
    let prompt = String(cString: tokenctl_g_variant_get_string(promptValue, nil))
    if prompt == "/" { return }

    let outcome = PromptOutcome()
    let subscription = withExtendedLifetime(outcome) {
      tokenctl_g_dbus_connection_signal_subscribe(
        connection, busName, "org.freedesktop.Secret.Prompt", "Completed", prompt, nil, G_DBUS_SIGNAL_FLAGS_NONE,
        { _, _, _, _, _, parameters, data in
          let outcome = Unmanaged<PromptOutcome>.fromOpaque(data!).takeUnretainedValue()
          let dismissed = tokenctl_g_variant_get_child_value(parameters, 0)!
          outcome.dismissed = tokenctl_g_variant_get_boolean(dismissed) != 0
          tokenctl_g_variant_unref(dismissed)
        }, Unmanaged.passUnretained(outcome).toOpaque(), nil)
    }
    defer { tokenctl_g_dbus_connection_signal_unsubscribe(connection, subscription) }
    prompting.notice(provider?.name ?? "your keyring")
    let deadline = ContinuousClock.now + prompting.timeout
    let milliseconds = prompting.timeout.components.seconds * 1000
    // The window id is empty: a command line has no window for the dialog to sit over.
    let answered = try bus.call(
      prompt, "org.freedesktop.Secret.Prompt", "Prompt",
      tokenctl_g_variant_new_tuple([tokenctl_g_variant_new_string("")], 1),
      replyType: "()", timeout: Int32(clamping: milliseconds), what: "unlocking the keyring")
    tokenctl_g_variant_unref(answered)
    let context = tokenctl_g_main_context_get_thread_default()
    // Polled, so that the deadline holds when no signal comes at all.
    while outcome.dismissed == nil {
      if tokenctl_g_main_context_iteration(context, 0) != 0 { continue }
      if ContinuousClock.now >= deadline {
        if let dismissed = try? bus.call(
          prompt, "org.freedesktop.Secret.Prompt", "Dismiss", nil, replyType: "()", timeout: 5000,
          what: "unlocking the keyring")
        {
          tokenctl_g_variant_unref(dismissed)
        }
        throw SecretServiceError.unanswered(names, provider: provider, after: prompting.timeout)
      }
      usleep(50_000)
    }
    if outcome.dismissed == true { throw SecretServiceError.refused(names, provider: provider) }
  }

  /// Where the `Completed` signal's callback leaves whether the prompt was dismissed.
  private final class PromptOutcome { var dismissed: Bool? }
}
