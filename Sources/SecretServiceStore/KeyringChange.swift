/// What changed in the keyring, as `KeyringChangeMonitor` reports it.
///
/// Each is a reason to drop whatever was read from the keyring, not a description of
/// what to read again: the Secret Service announces changes by object path, which says
/// nothing of an item's account or group until the item is read.
public enum KeyringChange: Sendable, Hashable {
  /// The item at this object path was created, changed or deleted: what held it reads it
  /// again, alone (`AddressedTokenStore`).
  case item(String)
  /// Items changed that no one path names: a collection was created, deleted or changed
  /// (its label, its list of items), or an item signal came without its path.
  case items
  /// A collection was locked or unlocked.
  case lockState
  /// `org.freedesktop.secrets` changed hands on the bus: its daemon restarted, exited, or
  /// started. Everything read before may be gone, and libsecret's connection with it.
  case serviceRestarted

  /// The properties of a collection that change with every item created or deleted in
  /// it, after the item signal that named that item.
  static let followsItemSignals: Set<String> = ["Items", "Modified"]

  /// The change a signal announces, by the interface and member of the signal and, for
  /// `PropertiesChanged`, the names of the properties it lists as changed or invalidated;
  /// nil for a signal that changes nothing a reader could have cached.
  ///
  /// Locking a collection announces `ItemChanged` for each item and `CollectionChanged`
  /// before the collection's `PropertiesChanged` with `Locked`, and creating an item
  /// `ItemCreated` then `PropertiesChanged` with `Items`: one change is usually reported as
  /// several, the last being the most specific. A collection's `Items` and `Modified`
  /// (``followsItemSignals``) say nothing the item signal before them did not.
  ///
  /// `item` is the object path an item signal carries (its one argument).
  init?(interface: String, member: String, properties: [String] = [], item: String? = nil) {
    switch (interface, member) {
    case ("org.freedesktop.Secret.Collection", "ItemCreated"), ("org.freedesktop.Secret.Collection", "ItemDeleted"),
      ("org.freedesktop.Secret.Collection", "ItemChanged"):
      self = item.map(KeyringChange.item) ?? .items
    case ("org.freedesktop.Secret.Service", "CollectionCreated"),
      ("org.freedesktop.Secret.Service", "CollectionDeleted"),
      ("org.freedesktop.Secret.Service", "CollectionChanged"):
      self = .items
    case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
      if properties.contains("Locked") {
        self = .lockState
      } else if !properties.isEmpty, properties.allSatisfy(Self.followsItemSignals.contains) {
        // The collection's list of items, after the ItemCreated or ItemDeleted that named
        // the item: forgetting everything for it made every item another program created
        // cost a read of the whole group.
        return nil
      } else {
        self = .items
      }
    case ("org.freedesktop.DBus", "NameOwnerChanged"):
      self = .serviceRestarted
    default:
      return nil
    }
  }
}
