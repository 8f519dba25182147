#if canImport(Glibc)
  import Glibc
#endif

/// Users as messages name them: the login name from the password database, so that an
/// owner reads `nobody` and a fix reads `chown ada FILE`; the number when it has none.
package enum UserName {
  /// The login name of `uid`, or nil when the password database has none.
  package static func of(_ uid: uid_t) -> String? {
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>?
    // getpwuid_r, not getpwuid: its static buffer is shared by every thread.
    var buffer = [CChar](repeating: 0, count: 4096)
    return buffer.withUnsafeMutableBufferPointer { buffer in
      guard let base = buffer.baseAddress, getpwuid_r(uid, &entry, base, buffer.count, &found) == 0, found != nil,
        let name = entry.pw_name
      else { return nil }
      return String(cString: name)
    }
  }

  /// `ada`, or `uid 1000` for a user the password database does not know.
  package static func describe(_ uid: uid_t) -> String { of(uid) ?? "uid \(uid)" }
}
