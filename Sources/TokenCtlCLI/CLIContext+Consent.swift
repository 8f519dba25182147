import ApplicationConsent

#if canImport(Glibc)
  import Glibc
#endif

extension CLIContext {
  /// The grants file under the context's `XDG_STATE_HOME`; its problems become warnings.
  /// Reads nothing until asked.
  func applicationGrants() -> ApplicationGrants {
    ApplicationGrants(directories: directories, warn: { [warnings] in warnings.add($0) })
  }

  /// The audit log under the context's `XDG_STATE_HOME`; a failure to write is a warning.
  func auditLog() -> AuditLog {
    AuditLog(directories: directories, warn: { [warnings] in warnings.add($0) })
  }

  /// The working directory, for application paths given relative to it; `PWD` when
  /// `getcwd` fails (a removed directory).
  func currentDirectory() -> String {
    guard let path = getcwd(nil, 0) else { return environment["PWD"] ?? "/" }
    defer { free(path) }
    return String(cString: path)
  }
}
