import ApplicationConsent
import NativeAppSupport

#if canImport(Glibc)
  import Glibc
#endif

/// How the agent words a peer it could not tell, in the audit log and to the client.
extension UnidentifiedPeer {
  /// The audit log's `app=`: the executable, when there is one to name.
  var auditApplication: String {
    switch self {
    case .unreadable: ConsentGate.unidentified
    case .busProxy(let executable), .otherMountNamespace(let executable), .notTheFileAtItsPath(let executable),
      .untrustedFlatpakInfo(let executable, _):
      executable
    }
  }

  /// The audit log's `reason=`, in a few words.
  var auditReason: String {
    switch self {
    case .unreadable: "unidentified"
    case .busProxy: "a D-Bus proxy outside a Flatpak sandbox"
    case .otherMountNamespace: "another mount namespace, not a Flatpak sandbox"
    case .notTheFileAtItsPath: "not the file at its path now"
    case .untrustedFlatpakInfo(_, let problem): "untrusted /.flatpak-info: \(Self.words(problem))"
    }
  }

  /// Why the peer may not have `what`, and what would let it: a D-Bus error's message.
  func refusal(of what: String) -> String {
    switch self {
    case .unreadable:
      return "tokenctl could not tell which application is asking (its /proc entry is closed or it has gone), "
        + "so it may not have \(what)"
    case .busProxy(let executable):
      return "\(executable) is a D-Bus proxy outside any Flatpak sandbox: tokenctl cannot tell which program is "
        + "behind it, so none may have \(what). Connect to the session bus directly, or run the program as a "
        + "Flatpak app"
    case .otherMountNamespace(let executable):
      return "\(executable) runs in another mount namespace that is not a Flatpak sandbox (a container, or a "
        + "sandbox such as Snap's), where tokenctl cannot tell which application it is, so it may not have "
        + "\(what). Run it outside that namespace, or as a Flatpak app"
    case .notTheFileAtItsPath(let executable):
      return "the program asking runs a file that is not \(executable) as installed now (it was replaced since the "
        + "program started, or another file is mounted over it), so it may not have \(what). If an upgrade "
        + "replaced it, restart the program"
    case .untrustedFlatpakInfo(let executable, let problem):
      return "\(executable) runs in a sandbox whose /.flatpak-info Flatpak did not make (\(Self.words(problem))), "
        + "so tokenctl cannot tell which app it is, and it may not have \(what)"
    }
  }

  private static func words(_ problem: FlatpakInfo.Problem) -> String {
    switch problem {
    case .symbolicLink: "it is a symbolic link"
    case .notRegularFile: "it is not a regular file"
    case .owner(let uid): "it belongs to \(UserName.describe(uid))"
    case .writableByOthers(let mode): "others may change it, mode \(String(mode, radix: 8))"
    case .tooLarge: "it is larger than \(FlatpakInfo.sizeLimit / 1024) KiB"
    case .unreadable(let error): "it cannot be read: \(String(cString: strerror(error)))"
    case .malformed: "it is not a keyfile"
    case .noAppID: "it names no app"
    case .invalidAppID: "its app id is not one Flatpak accepts"
    }
  }
}
