/// tokenctl's folder in the session's runtime directory, `$XDG_RUNTIME_DIR/tokenctl`: where
/// the agent's socket, the lock files and the grant journal live. The one rule for it,
/// below both the agent's wire protocol (where the socket is) and the native-app support
/// (XDGDirectories), so that neither reaches into the other for it. Embedded Swift's
/// subset, with the environment read through a lookup: the front end builds it too.
public enum XDGRuntime {
  /// `$XDG_RUNTIME_DIR/tokenctl`, or nil without a runtime directory. The XDG Base
  /// Directory Specification says a relative path must be ignored.
  public static func tokenctlFolder(_ variable: (String) -> String?) -> String? {
    guard let runtime = variable("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else { return nil }
    return runtime + "/tokenctl"
  }
}
