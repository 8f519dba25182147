import TokenKit

/// The parts of an HTTP/1.1 request head (RFC 9112 §2–3) the loopback listener looks at.
///
/// Pure, and package-visible, so that the fuzz targets reach the same parsing and routing
/// as a browser does.
package struct LoopbackRequest: Hashable {
  package var method: String
  /// The path of the request target, as sent (still percent-encoded).
  package var path: String
  /// What follows `?` in the target, without a fragment; empty when there is none.
  package var query: String
  /// The `Host` field, if sent.
  package var host: String?

  /// Where a request goes: refused for its method, host or path, or to the judge.
  package enum Route: Hashable {
    case wrongMethod
    case foreignHost
    case otherPath
    case callback(AuthorizationCallback)
  }

  /// The index just past the blank line that ends a request head in `bytes`, if it has
  /// arrived. Bare LF line ends are accepted, as RFC 9112 §2.2 allows.
  package static func endOfHead(in bytes: [UInt8]) -> Int? {
    var index = 0
    while let newline = bytes[index...].firstIndex(of: 0x0A) {
      let next = newline + 1
      if next < bytes.count, bytes[next] == 0x0A { return next + 1 }
      if next + 1 < bytes.count, bytes[next] == 0x0D, bytes[next + 1] == 0x0A { return next + 2 }
      index = next
    }
    return nil
  }

  /// Parses a request head (the request line and the fields); nil when it is not one.
  package init?(head: some Collection<UInt8>) {
    // Lines split on the bytes: as Characters, CR LF is one grapheme and never equals LF.
    var lines = Array(head).split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
      String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
    }[...]
    guard let requestLine = lines.popFirst() else { return nil }
    let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
    guard parts.count == 3, !parts[0].isEmpty, parts[2].hasPrefix("HTTP/1.") else { return nil }
    method = String(parts[0])

    var target = parts[1]
    // The absolute form (RFC 9112 §3.2.2) is for proxies, but a server must accept it.
    if target.lowercased().hasPrefix("http://") {
      let afterScheme = target.dropFirst("http://".count)
      target = afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? "/"
    }
    guard target.hasPrefix("/") else { return nil }
    if let hash = target.firstIndex(of: "#") { target = target[..<hash] }
    if let question = target.firstIndex(of: "?") {
      path = String(target[..<question])
      query = String(target[target.index(after: question)...])
    } else {
      path = String(target)
      query = ""
    }

    host = nil
    for line in lines where !line.isEmpty {
      guard let colon = line.firstIndex(of: ":") else { return nil }
      if line[..<colon].lowercased() == "host" {
        host = String(line[line.index(after: colon)...]).trimmingASCIIWhitespace()
      }
    }
  }

  /// The host name of the `Host` field, lower-cased, without port or brackets.
  package var hostName: String? {
    guard var value = host?.lowercased() else { return nil }
    if value.hasPrefix("[") {
      return value.firstIndex(of: "]").map { String(value[value.index(after: value.startIndex)..<$0]) }
    }
    if let colon = value.lastIndex(of: ":") { value = String(value[..<colon]) }
    return value
  }

  /// The route of this request to a listener waiting at `path` under one of `hostNames`.
  package func route(path expectedPath: String, hostNames: Set<String>) -> Route {
    guard method == "GET" else { return .wrongMethod }
    // A page the browser visits may resolve its own name to 127.0.0.1 (DNS rebinding)
    // and send requests here; a browser following our redirect names our host.
    if let hostName, !hostNames.contains(hostName) { return .foreignHost }
    // Browsers ask for /favicon.ico; that, and anything else, is not the redirect.
    guard path == expectedPath else { return .otherPath }
    return .callback(AuthorizationCallback(query: query))
  }
}
