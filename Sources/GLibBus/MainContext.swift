import CLibSecret

/// GLib main contexts run on the calling thread, for the synchronous work of a thread that
/// is not a ``MainLoopThread``'s: the keyring store's libsecret calls.
public enum MainContext {
  /// Runs `body` with a main context of its own as this thread's default, and drains it
  /// before it goes.
  ///
  /// A GDBus proxy subscribes to signals in the thread-default context of its creation,
  /// and when it is freed GLib hands that subscription's clean-up to the same context: at
  /// once when it is the thread's default then, else as an idle source. The contexts of
  /// libsecret's `_sync` calls are never run again, so every item a `_sync` search made
  /// left its clean-up behind for good: a resident agent grew by about 2 KiB per item on
  /// every read of the keyring. Proxies made (with the asynchronous calls, in
  /// ``runAsync(_:finish:)``) and freed inside `body` clean up at once.
  public static func withOwn<R>(_ body: () throws -> R) rethrows -> R {
    let context = tokenctl_g_main_context_new()!
    defer {
      drain(context)
      tokenctl_g_main_context_unref(context)
    }
    return try withThreadDefault(context, body)
  }

  /// Runs the asynchronous call `start` in the thread-default context (see
  /// ``withOwn(_:)``) until its callback comes, and returns what `finish` makes of its
  /// result.
  public static func runAsync<R>(
    _ start: (GAsyncReadyCallback, UnsafeMutableRawPointer) -> Void,
    finish: (OpaquePointer) -> R
  ) -> R {
    let pending = PendingResult()
    let context = tokenctl_g_main_context_get_thread_default()
    withExtendedLifetime(pending) {
      start(
        { _, result, data in
          let pending = Unmanaged<PendingResult>.fromOpaque(data!).takeUnretainedValue()
          pending.result = OpaquePointer(tokenctl_g_object_ref(UnsafeMutableRawPointer(result)))
        }, Unmanaged.passUnretained(pending).toOpaque())
      while pending.result == nil { _ = tokenctl_g_main_context_iteration(context, 1) }
    }
    let result = pending.result!
    defer { GLib.unref(result) }
    return finish(result)
  }

  /// Where an asynchronous call's callback leaves its `GAsyncResult`.
  private final class PendingResult { var result: OpaquePointer? }

  /// Runs `body` with `context` (nil: GLib's global default one) as this thread's default.
  static func withThreadDefault<R, E: Error>(_ context: OpaquePointer?, _ body: () throws(E) -> R) throws(E) -> R {
    tokenctl_g_main_context_push_thread_default(context)
    defer { tokenctl_g_main_context_pop_thread_default(context) }
    return try body()
  }

  /// Dispatches what is ready in `context`, until nothing is.
  static func drain(_ context: OpaquePointer?) {
    while tokenctl_g_main_context_iteration(context, 0) != 0 {}
  }
}
