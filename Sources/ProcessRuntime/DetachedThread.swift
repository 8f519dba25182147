#if canImport(Glibc)
  import Glibc
#endif

/// Runs blocking work (`curl_easy_perform`, `poll`, reading a terminal) on a thread of its
/// own, so that it never holds one of the few threads of Swift's cooperative pool.
///
/// A bare detached pthread rather than Dispatch: the work is rare (a handful of requests
/// per command) and long, and a pthread needs no queue and no library beyond libc.
public enum DetachedThread {
  private final class Work {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }

  /// Starts `body` on a new detached thread; false when the system has no thread to give.
  public static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    let work = Unmanaged.passRetained(Work(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(
      &thread, &attributes,
      { context in
        Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().body()
        return nil
      }, work)
    guard result == 0 else {
      Unmanaged<Work>.fromOpaque(work).release()
      return false
    }
    return true
  }
}
