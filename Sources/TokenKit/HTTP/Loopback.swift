#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// What counts as this machine: the one rule that decides where plain http may carry a
/// token, an authorization code or a client secret. Every check in tokenctl asks here, so
/// there is no weaker copy for an attacker to aim at.
///
/// Loopback is `localhost`, the IPv6 loopback address `::1`, or an IPv4 literal in
/// 127.0.0.0/8 (RFC 1122 §3.2.1.3, RFC 8252 §8.3), and nothing else. A name is judged by
/// what it is, never by how it starts: `127.attacker.example` and
/// `127.0.0.1.attacker.example` are names in someone else's DNS zone. Address literals are
/// parsed with `inet_pton`, which takes only the plain forms (no octal, hex or shortened
/// IPv4, no zone index), so what passes here is what the network stack will connect to.
public enum Loopback {
  /// Whether `host`, as a URL gives it (brackets around an IPv6 literal allowed, no port),
  /// is this machine's loopback interface.
  public static func isLoopback(host: String) -> Bool {
    var name = host.lowercased()
    if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
    if name == "localhost" { return true }
    var v4 = in_addr()
    if inet_pton(AF_INET, name, &v4) == 1 {
      // s_addr is in network byte order: its first byte in memory is the first octet.
      return withUnsafeBytes(of: &v4) { $0[0] } == 127
    }
    var v6 = in6_addr()
    if inet_pton(AF_INET6, name, &v6) == 1 {
      return withUnsafeBytes(of: &v6) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
    }
    return false
  }

  /// Whether `url` may carry secrets: https to any host, or http to a loopback host
  /// (RFC 6749 §3.1 and §3.2 require TLS; RFC 8252 §8.3 exempts loopback).
  public static func isSecureOrLoopback(_ url: URL) -> Bool {
    switch url.scheme?.lowercased() {
    case "https": return true
    case "http": return isLoopback(host: url.host() ?? "")
    default: return false
    }
  }
}
