import CLibSecret
import TokenKit

/// Small conversions between GLib's C types and Swift's, kept in one place so the store
/// reads as Secret Service calls and not as pointer juggling.
enum GLibBridge {
  /// A new `GHashTable` of strings that owns copies of `dictionary`; free with
  /// `g_hash_table_unref`.
  static func hashTable(_ dictionary: [String: String]) -> OpaquePointer {
    let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)!
    for (key, value) in dictionary {
      g_hash_table_insert(table, g_strdup(key), g_strdup(value))
    }
    return table
  }

  /// The contents of a `GHashTable` of strings.
  static func dictionary(_ table: OpaquePointer) -> [String: String] {
    var result: [String: String] = [:]
    var iterator = GHashTableIter()
    g_hash_table_iter_init(&iterator, table)
    var key: gpointer? = nil
    var value: gpointer? = nil
    while g_hash_table_iter_next(&iterator, &key, &value) != 0 {
      guard let key, let value else { continue }
      result[String(cString: key.assumingMemoryBound(to: CChar.self))] =
        String(cString: value.assumingMemoryBound(to: CChar.self))
    }
    return result
  }

  /// The elements of a `GList` of objects, which this frees (the objects are handed over
  /// to the caller, who must `g_object_unref` each one).
  static func takeObjects<T>(_ list: UnsafeMutablePointer<GList>?, as type: T.Type) -> [UnsafeMutablePointer<T>] {
    var objects: [UnsafeMutablePointer<T>] = []
    var node = list
    while let current = node {
      if let data = current.pointee.data { objects.append(data.assumingMemoryBound(to: T.self)) }
      node = current.pointee.next
    }
    g_list_free(list)
    return objects
  }

  static func unref<T>(_ object: UnsafeMutablePointer<T>) { g_object_unref(object) }

  /// Runs a libsecret/GIO call that reports failure through a `GError**`, turning a
  /// failure into a `TokenKitError` that says what to do.
  static func call<R>(
    _ what: String, _ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> R?
  ) throws -> R? {
    var error: UnsafeMutablePointer<GError>? = nil
    let result = body(&error)
    if let error {
      defer { g_error_free(error) }
      throw SecretServiceError.classify(error, during: what)
    }
    return result
  }
}
