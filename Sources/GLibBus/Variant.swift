import CLibSecret

/// One value read out of a `GVariant` in place, for the keyring's read paths: they take a
/// few values out of large replies (every item's attributes and secret) where converting
/// the whole reply to ``BusValue`` would copy all of it.
public enum Variant {
  /// The string (or object path) at `index` of a tuple or array.
  public static func string(_ container: OpaquePointer, _ index: Int) -> String {
    let child = tokenctl_g_variant_get_child_value(container, index)!
    defer { tokenctl_g_variant_unref(child) }
    return String(cString: tokenctl_g_variant_get_string(child, nil))
  }

  /// The value of `key` in a dictionary (`a{sv}`), nil when it has none of `type`; the
  /// caller frees it.
  public static func lookup(_ dictionary: OpaquePointer, _ key: String, type: String) -> OpaquePointer? {
    type.withCString { tokenctl_g_variant_lookup_value(dictionary, key, OpaquePointer($0)) }
  }
}
