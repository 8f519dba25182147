/// Who an application is, as consent names it (tokenctl-dbus(7), "Consent"): a program of
/// the host by its executable, a Flatpak app by its app id, or a host the agent is
/// forwarded to over ssh by its name, never by what it says of itself.
///
/// Each has one name, which grants, the audit log, messages and `tokenctl allow` use: the
/// executable's canonical path (`/usr/bin/python3.11`), `flatpak:` and the app id
/// (`flatpak:org.example.App`), or `host:` and the host name (`host:build1`). A path starts
/// with `/`, and the prefixes differ, so no two kinds meet.
public enum ApplicationIdentity: Sendable, Hashable {
  /// A program outside any sandbox: the canonical path of its executable, as
  /// `/proc/PID/exe` shows it.
  case executable(String)
  /// An app in a Flatpak sandbox, by the app id of the sandbox's `/.flatpak-info`.
  case flatpak(FlatpakAppID)
  /// A host the agent is forwarded to (`tokenctl ssh`), by the host name ssh connects to
  /// (`ssh -G`'s `hostname`): every request on the socket the agent opened for it is the
  /// host's, whichever program there asked (``HostName``).
  case host(HostName)

  static let flatpakPrefix = "flatpak:"
  static let hostPrefix = "host:"

  /// The application's name: its path, or `flatpak:APP_ID`.
  public var name: String {
    switch self {
    case .executable(let path): path
    case .flatpak(let id): Self.flatpakPrefix + id.rawValue
    case .host(let host): Self.hostPrefix + host.rawValue
    }
  }

  /// The application `name` names; nil for a name that is neither an absolute path,
  /// `flatpak:` followed by a valid app id, nor `host:` followed by a valid host name.
  public init?(name: String) {
    if name.hasPrefix(Self.hostPrefix) {
      guard let host = HostName(String(name.dropFirst(Self.hostPrefix.count))) else { return nil }
      self = .host(host)
    } else if name.hasPrefix(Self.flatpakPrefix) {
      guard let id = FlatpakAppID(String(name.dropFirst(Self.flatpakPrefix.count))) else { return nil }
      self = .flatpak(id)
    } else if name.hasPrefix("/") {
      self = .executable(name)
    } else {
      return nil
    }
  }

  /// Whether `name` means a Flatpak app, valid or not: what a user typed as
  /// `flatpak:SOMETHING` is never a program to look up in PATH.
  public static func isFlatpakName(_ name: String) -> Bool { name.hasPrefix(flatpakPrefix) }
}
