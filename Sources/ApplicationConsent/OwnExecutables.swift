import NativeAppSupport

/// tokenctl's own executables, which consent always allows (tokenctl-dbus(7), "Consent"):
/// the one running and its siblings (``siblings``).
///
/// This is the one rule for "ours", for the agent telling a peer and for `tokenctl allow`
/// declining to grant what needs no grant: a file is ours when it is one of these files
/// (``FileID``), whatever path reaches it. A path says nothing of the kind: another
/// program bind-mounted over tokenctl's path, in a namespace of its own, is not tokenctl.
///
/// The files are looked at anew each time, never kept: a tokenctl upgraded in place
/// beside a running agent is still ours, and the running executable is looked at through
/// `/proc/self/exe`, which holds the file the agent runs even after it was replaced.
public enum OwnExecutables {
  /// The folder the running executable was started from, where its siblings are.
  private static let folder: String? = {
    guard let me = PeerApplication.readLink("/proc/self/exe") else { return nil }
    let path = PeerApplication.withoutDeletedSuffix(me)
    return String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
  }()

  /// The names of tokenctl's executables: tokenctl, the helpers that are tokenctl under a
  /// tool's name, the front end (AgentFrontEnd), which users run under those names, and
  /// the agent's own (tokenctl-agent), which `tokenctl agent` runs.
  public static let siblings = [
    "tokenctl", "git-credential-tokenctl", "docker-credential-tokenctl", "tokenctl-front-end", "tokenctl-agent",
  ]

  /// Whether `file` is one of tokenctl's own executables, as they are now: beside the
  /// running one (a build folder), or, for the full program `make install` puts in
  /// `libexec/tokenctl`, the front ends in `bin` beside `libexec`.
  public static func contains(_ file: FileID) -> Bool {
    var paths = ["/proc/self/exe"]
    if let folder {
      paths += siblings.map { folder + "/" + $0 }
      if folder.hasSuffix("/libexec/tokenctl") { paths += siblings.map { folder + "/../../bin/" + $0 } }
    }
    return paths.contains { FileID.of($0) == file }
  }

  /// Whether the file at `path` is one of tokenctl's own executables.
  public static func contains(path: String) -> Bool {
    FileID.of(path).map(contains) ?? false
  }
}
