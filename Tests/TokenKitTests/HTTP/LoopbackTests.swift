import Foundation
import Testing
import TokenKit

@Suite struct LoopbackTests {
  @Test(arguments: [
    "localhost", "LOCALHOST", "127.0.0.1", "127.255.255.254", "127.1.2.3", "::1", "[::1]", "0:0:0:0:0:0:0:1",
  ])
  func loopbackHosts(host: String) {
    #expect(Loopback.isLoopback(host: host))
  }

  @Test(arguments: [
    // Names that start like loopback but live in someone else's DNS zone.
    "127.attacker.example", "127.0.0.1.attacker.example", "localhost.attacker.example", "127.0.0.1.",
    // Forms inet_pton refuses, which resolvers may still send elsewhere.
    "127.1", "0177.0.0.1", "0x7f.0.0.1", "127.000.000.001",
    // Other addresses, and IPv4 in IPv6 clothing.
    "128.0.0.1", "10.0.0.1", "::ffff:127.0.0.1", "[::ffff:127.0.0.1]", "::2", "::1%lo", "", "[]",
  ])
  func otherHosts(host: String) {
    #expect(!Loopback.isLoopback(host: host))
  }

  @Test(arguments: [
    ("https://id.example/", true), ("http://127.0.0.1:8080/token", true), ("http://[::1]:9/", true),
    ("http://localhost/", true), ("http://127.attacker.example/", false), ("http://id.example/", false),
    ("ftp://127.0.0.1/", false),
  ])
  func secretsTravelOverHTTPSOrStayOnThisMachine(url: String, allowed: Bool) throws {
    #expect(Loopback.isSecureOrLoopback(try #require(URL(string: url))) == allowed)
  }
}
