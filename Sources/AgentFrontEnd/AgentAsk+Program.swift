import CLinux

#if canImport(Glibc)
  import Glibc
#endif

extension AgentAsk {
  /// What this client says it is (``AgentMessage/reportedProgramField``): the name it was
  /// run under and the command of the process that ran it, "git-credential-tokenctl (run
  /// by git)". The agent never takes it for an identity: it shows it only in the prompt
  /// for a forwarded host, whose programs it cannot see, as what that host reports.
  static func programReport() -> String {
    let name =
      tokenctl_argument_count() > 0 ? tokenctl_arguments()[0].map { String(cString: $0) } ?? "tokenctl" : "tokenctl"
    let own = name.lastIndex(of: "/").map { String(name[name.index(after: $0)...]) } ?? name
    guard let parent = command(of: getppid()) else { return own }
    return own + " (run by " + parent + ")"
  }

  /// `/proc/PID/comm` without its newline (the kernel keeps at most 15 bytes of it).
  private static func command(of pid: Int32) -> String? {
    // fopen, not open(2), which is variadic and so not to be had in Embedded Swift.
    guard let file = fopen("/proc/\(pid)/comm", "re") else { return nil }
    defer { fclose(file) }
    var buffer = [UInt8](repeating: 0, count: 32)
    let count = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
    guard count > 0 else { return nil }
    let text = buffer[..<count].prefix { $0 != 10 }
    return text.isEmpty ? nil : String(decoding: text, as: UTF8.self)
  }
}
