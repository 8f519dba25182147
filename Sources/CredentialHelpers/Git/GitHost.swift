import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Hosts as git names them in a credential request: lowercased, with the port when the
/// remote URL gives one.
enum GitHost {
  /// Whether `host` as git sends it (perhaps with a port) is this machine.
  static func isLoopback(_ host: String) -> Bool {
    var name = host
    if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
      name = String(name[name.index(after: name.startIndex)..<close])
    } else if let colon = name.lastIndex(of: ":"), name.firstIndex(of: ":") == colon {
      name = String(name[..<colon])
    }
    return Loopback.isLoopback(host: name)
  }

  /// A URL's host as git names it in a request.
  static func name(of url: URL) -> String? {
    guard let host = url.host()?.lowercased(), !host.isEmpty else { return nil }
    return url.port.map { "\(host):\($0)" } ?? host
  }
}
