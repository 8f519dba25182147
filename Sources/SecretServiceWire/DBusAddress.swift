#if canImport(Glibc)
  import Glibc
#endif

/// Where the session bus listens, as this client reaches it: a UNIX socket by path or by
/// abstract name, the first of `DBUS_SESSION_BUS_ADDRESS`'s entries that is one (the
/// specification's "Server Addresses"); without the variable, `$XDG_RUNTIME_DIR/bus`, as
/// GLib and sd-bus default to. Any other transport (`tcp:`, `launchd:`, `autolaunch:`) is
/// left to GDBus.
enum DBusAddress: Equatable {
  case path(String)
  case abstract(String)

  init?(_ address: String?, runtimeDirectory: String?) {
    guard let address else {
      guard let runtimeDirectory, !runtimeDirectory.isEmpty else { return nil }
      self = .path(runtimeDirectory + "/bus")
      return
    }
    for entry in address.split(separator: ";") {
      guard entry.hasPrefix("unix:") else { continue }
      for pair in entry.dropFirst(5).split(separator: ",") {
        guard let equals = pair.firstIndex(of: "="),
          let value = Self.unescaped(pair[pair.index(after: equals)...]), !value.isEmpty
        else { continue }
        switch pair[..<equals] {
        case "path":
          self = .path(value)
          return
        case "abstract":
          self = .abstract(value)
          return
        default: continue
        }
      }
    }
    return nil
  }

  /// A value with its `%XX` escapes undone; nil when an escape is malformed.
  static func unescaped(_ text: Substring) -> String? {
    var bytes: [UInt8] = []
    var utf8 = text.utf8.makeIterator()
    while let byte = utf8.next() {
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      guard let high = utf8.next().flatMap(Self.hexDigit), let low = utf8.next().flatMap(Self.hexDigit) else {
        return nil
      }
      bytes.append(high << 4 | low)
    }
    return String(validating: bytes, as: UTF8.self)
  }

  private static func hexDigit(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
  }

  /// A socket connected to the address, or nil.
  func connect() -> Int32? {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let name: [UInt8]
    switch self {
    case .path(let path): name = Array(path.utf8) + [0]
    // An abstract name starts with a NUL and is as long as the length given says.
    case .abstract(let text): name = [0] + Array(text.utf8)
    }
    guard name.count <= MemoryLayout.size(ofValue: address.sun_path) else { return nil }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
    }
    guard connected == 0 else {
      close(fd)
      return nil
    }
    return fd
  }
}
