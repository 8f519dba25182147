#if canImport(Glibc)
  import Glibc
#endif

/// Where tokenctl's programs find each other: side by side, in a build folder as in
/// `libexec/tokenctl` where `make install` puts them. `tokenctl agent` runs the agent's own
/// executable, which holds the agent and nothing of the command line, so that the resident
/// process maps and touches no code it never runs (docs/performance.md, "The agent's
/// memory"); the agent runs the full program for what only the command line does: a
/// refresh child, a sign-in.
public enum SiblingProgram {
  /// The full program: the command line.
  public static let full = "tokenctl"
  /// The agent's executable (Sources/tokenctl-agent).
  public static let agent = "tokenctl-agent"

  /// The executable `name` beside the running one, or nil when there is none.
  ///
  /// The running one is read from `/proc/self/exe`, without the " (deleted)" the kernel
  /// adds once an upgrade replaced the file: its new sibling is the one to run then.
  public static func path(_ name: String) -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    var me = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let deleted = " (deleted)"
    if me.hasSuffix(deleted) { me.removeLast(deleted.count) }
    guard let slash = me.lastIndex(of: "/") else { return nil }
    let path = String(me[...slash]) + name
    return access(path, X_OK) == 0 ? path : nil
  }
}
