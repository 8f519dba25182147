#if canImport(Glibc)
  import Glibc
#endif

/// Secret bytes the agent keeps between requests: a token set's stored form.
///
/// A Swift `String` or `Array` may be copied, moved and freed anywhere without being
/// cleared; this buffer is allocated once, locked out of swap where `RLIMIT_MEMLOCK`
/// allows (best effort: the default limit is small and a refused lock is not an error),
/// and wiped with `explicit_bzero` before it is freed. The copies a request makes while it
/// answers are short-lived; what stays in memory between requests stays here.
final class SecretBox: @unchecked Sendable {
  // Written only in init and deinit; read-only in between.
  private let pointer: UnsafeMutableRawPointer
  private let count: Int
  private let locked: Bool

  init(_ bytes: [UInt8]) {
    let count = bytes.count
    let pointer = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
    bytes.withUnsafeBytes { if let base = $0.baseAddress { pointer.copyMemory(from: base, byteCount: count) } }
    self.count = count
    self.pointer = pointer
    locked = count > 0 && mlock(pointer, count) == 0
  }

  deinit {
    explicit_bzero(pointer, count)
    if locked { munlock(pointer, count) }
    pointer.deallocate()
  }

  /// The bytes, for as long as `body` runs.
  func withBytes<Result>(_ body: ([UInt8]) throws -> Result) rethrows -> Result {
    var copy = Array(UnsafeRawBufferPointer(start: pointer, count: count))
    defer { copy.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } } }
    return try body(copy)
  }
}
