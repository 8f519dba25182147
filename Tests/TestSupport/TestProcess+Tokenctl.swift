import Foundation

extension TestProcess {
  /// The `tokenctl` built beside this test bundle (`swift build --build-tests` builds both).
  public static var tokenctl: String {
    if let path = ProcessInfo.processInfo.environment["TOKENCTL_BIN"] { return path }
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return me.deletingLastPathComponent().appendingPathComponent("tokenctl").path
  }

  /// The front end built beside it (Sources/tokenctl-front-end), which `make install`
  /// installs as `tokenctl` and under each helper's name.
  public static var frontEnd: String {
    URL(fileURLWithPath: tokenctl).deletingLastPathComponent().appendingPathComponent("tokenctl-front-end").path
  }
}
