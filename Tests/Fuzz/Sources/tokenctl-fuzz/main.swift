// libFuzzer's `main` calls these; no top-level code runs here, so nothing may rely on it.
import TokenCtlFuzzing

#if canImport(Glibc)
  import Glibc
#endif

/// Checks FUZZ_TARGET once, before the first input, so that a typo fails at once and
/// loudly instead of fuzzing nothing.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutableRawPointer?, _ argv: UnsafeMutableRawPointer?) -> CInt {
  if Selection.target == nil {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
    let message = "tokenctl-fuzz: set FUZZ_TARGET to one of: \(names)\n"
    _ = message.withCString { write(2, $0, strlen($0)) }
    exit(2)
  }
  return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
  let bytes = count == 0 ? [] : [UInt8](UnsafeRawBufferPointer(start: start, count: count))
  _ = Selection.target?.run(bytes)
  return 0
}
