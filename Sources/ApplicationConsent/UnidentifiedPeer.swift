/// Why the application behind a peer could not be told, so that it gets what nobody
/// allowed, and the front end can say why (tokenctl-dbus(7), "Consent").
public enum UnidentifiedPeer: Error, Sendable, Equatable {
  /// Its process could not be read: gone, its pid recycled, another user's, or its /proc
  /// entry closed to us.
  case unreadable
  /// A D-Bus proxy (`executable`) outside any Flatpak sandbox: every program behind it
  /// looks like the proxy, so none can be told from another.
  case busProxy(executable: String)
  /// A process of another mount namespace that is no Flatpak sandbox (a container, a
  /// namespace a program made itself, or a Snap sandbox, which tokenctl cannot identify):
  /// its executable's path means something else there.
  case otherMountNamespace(executable: String)
  /// A process whose `/proc/PID/exe` names `executable` but is not the file there now:
  /// the file was replaced since the process started, or another was mounted over it.
  case notTheFileAtItsPath(executable: String)
  /// A process of another mount namespace whose `/.flatpak-info` Flatpak did not make.
  case untrustedFlatpakInfo(executable: String, FlatpakInfo.Problem)
}
