/// A remote URL prefix that a configuration rule maps to an account, such as
/// `https://github.com/acme/`, matched against git's credential request.
///
/// Git sends the URL in parts: `protocol`, `host` (with any port) and, only when
/// `credential.useHttpPath` is set, `path` without its leading slash. So a prefix whose
/// path is empty matches every request to its host, and a longer one only requests that
/// carry a path. A path matches at a segment boundary: `acme` matches `acme/tools.git`
/// but not `acme-corp/tools.git`, and a trailing `.git` on the request is optional, so
/// `https://github.com/acme/tools` matches the remote `…/acme/tools.git`.
public struct GitRemotePrefix: Sendable, Hashable {
  public let scheme: String
  public let host: String
  public let path: String

  /// Parses `scheme://host[:port][/path]`; nil unless the scheme is http or https and a
  /// host is present. User names and queries have no place in a rule and are refused.
  public init?(_ text: String) {
    guard let separator = text.firstRange(of: "://") else { return nil }
    let scheme = text[..<separator.lowerBound].lowercased()
    guard scheme == "https" || scheme == "http" else { return nil }
    let rest = text[separator.upperBound...]
    let slash = rest.firstIndex(of: "/") ?? rest.endIndex
    let host = rest[..<slash].lowercased()
    guard !host.isEmpty, !host.contains("@"), !rest.contains("?"), !rest.contains("#") else { return nil }
    self.scheme = scheme
    self.host = host
    path = String(rest[slash...].drop { $0 == "/" })
  }

  /// How closely the prefix matches a request: the length of the path it matched, so the
  /// longest prefix wins; nil when it does not match.
  public func match(scheme requestScheme: String, host requestHost: String, path requestPath: String?) -> Int? {
    guard requestScheme.lowercased() == scheme, requestHost.lowercased() == host else { return nil }
    if path.isEmpty { return 0 }
    guard let requestPath else { return nil }
    let candidates = requestPath.hasSuffix(".git") ? [requestPath, String(requestPath.dropLast(4))] : [requestPath]
    // Bytes, not characters: a combining mark after the prefix must not join its last
    // character and hide the boundary.
    let prefix = Array(path.utf8)
    let matches = candidates.contains { candidate in
      let bytes = Array(candidate.utf8)
      guard bytes.starts(with: prefix) else { return false }
      return prefix.last == UInt8(ascii: "/") || bytes.count == prefix.count || bytes[prefix.count] == UInt8(ascii: "/")
    }
    return matches ? prefix.count : nil
  }
}
