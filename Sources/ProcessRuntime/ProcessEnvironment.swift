#if canImport(Glibc)
  import Glibc
#endif

/// This process's environment.
public enum ProcessEnvironment {
  /// The variables of getenv's table (`environ`), read as they are now: not through
  /// `ProcessInfo`, which would put Foundation's start on a program's start-up path.
  public static func current() -> [String: String] {
    var environment: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
      let pair = String(cString: pointer)
      if let equals = pair.firstIndex(of: "=") {
        environment[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
      }
      entry += 1
    }
    return environment
  }
}
