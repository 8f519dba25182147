import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Runs a writer and a reader on two real threads at once, so a store's atomicity is
/// tested under true parallelism and not only interleaved tasks.
enum ParallelThreads {
  static func run(writer: @escaping @Sendable () -> Void, reader: @escaping @Sendable () -> Void) {
    let threads = [writer, reader].map { body -> pthread_t in
      let box = Unmanaged.passRetained(Box(body)).toOpaque()
      var thread = pthread_t()
      let status = pthread_create(
        &thread, nil,
        { raw in
          let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
          box.body()
          return nil
        }, box)
      precondition(status == 0, "pthread_create failed: \(status)")
      return thread
    }
    for thread in threads { pthread_join(thread, nil) }
  }

  private final class Box: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }
}
