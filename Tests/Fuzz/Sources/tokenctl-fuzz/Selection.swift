import TokenCtlFuzzing

#if canImport(Glibc)
  import Glibc
#endif

/// The target named by FUZZ_TARGET, read once: getenv on every input would cost more than
/// some targets' work.
enum Selection {
  static let target: FuzzTarget? = getenv("FUZZ_TARGET").flatMap { FuzzTarget(rawValue: String(cString: $0)) }
}
