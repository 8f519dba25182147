#if canImport(Glibc)
  import Glibc
#else
  import CLinux  // Embedded Swift (the front end) has no Glibc module.
#endif

/// A point in CLOCK_MONOTONIC time, by which a blocking exchange on a socket must end.
public struct Deadline: Sendable {
  let end: Int64

  public init(milliseconds: Int32) { end = Self.now() + Int64(milliseconds) }

  /// What is left of it, 0 once it has passed.
  public func remainingMilliseconds() -> Int32 { Int32(clamping: max(0, end - Self.now())) }

  static func now() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
  }
}
