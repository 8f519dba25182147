import Foundation
import TestSupport
import Testing
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// What the agent leaves of a revoked account's tokens in its memory,
/// read as an attacker with root would: every readable mapping of the running agent,
/// through /proc/PID/mem. tokenctl-agent(1) promises that no copy is left once the
/// account is revoked and a few requests have run.
@Suite(.serialized) struct AgentMemoryTests {
  init() throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
  }

  /// How many times each of `needles` occurs in the memory of process `pid`.
  static func occurrences(of needles: [String], inProcess pid: pid_t) throws -> [Int] {
    let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
    let memory = open("/proc/\(pid)/mem", O_RDONLY | O_CLOEXEC)
    guard memory >= 0 else { throw TestFailure("cannot open /proc/\(pid)/mem: errno \(errno)") }
    defer { close(memory) }
    var counts = Array(repeating: 0, count: needles.count)
    let patterns = needles.map { Array($0.utf8) }
    for line in maps.split(separator: "\n") {
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count >= 2, fields[1].hasPrefix("r"), !line.hasSuffix("[vvar]"), !line.hasSuffix("[vsyscall]")
      else { continue }
      let bounds = fields[0].split(separator: "-").compactMap { UInt(String($0), radix: 16) }
      guard bounds.count == 2, bounds[1] > bounds[0] else { continue }
      var region = [UInt8](repeating: 0, count: Int(bounds[1] - bounds[0]))
      let read = region.withUnsafeMutableBytes { pread(memory, $0.baseAddress, $0.count, off_t(bounds[0])) }
      guard read > 0 else { continue }
      region.withUnsafeBytes { haystack in
        for (index, pattern) in patterns.enumerated() {
          // memchr for the first byte, memcmp for the rest (Glibc does not export memmem).
          pattern.withUnsafeBytes { needle in
            guard let base = haystack.baseAddress, let bytes = needle.baseAddress, let first = needle.first else {
              return
            }
            var offset = 0
            while read - offset >= needle.count,
              let found = memchr(base + offset, Int32(first), read - offset - needle.count + 1)
            {
              if memcmp(found, bytes, needle.count) == 0 { counts[index] += 1 }
              offset = UnsafeRawPointer(found) - base + 1
            }
          }
        }
      }
    }
    return counts
  }

  /// An account the agent refreshed (its tokens went through the HTTP client, the JSON
  /// reader, the keyring's reply and the answer), then revoked, then 40 requests for
  /// another account: none of the revoked account's tokens is left in the agent.
  @Test(.enabled(if: geteuid() == 0, "reading a non-dumpable agent's memory takes root"))
  func aRevokedAccountsTokensAreGoneFromTheAgentsMemory() async throws {
    let setup = try await AgentIntegrationTests.Setup()
    defer { setup.cleanUp() }
    let ada = try await setup.seed(name: "ada", expiresIn: -10)
    try await setup.seed(name: "grace", expiresIn: 3600)
    let agent = try await setup.startAgent()
    let first = try await TestProcess.run(TestProcess.tokenctl, ["token", "ada"], environment: setup.viaAgent())
    try #require(first.status == 0, "\(first.stderr)")
    let refreshed = try #require(try setup.store().load(ada.account.key)).tokens
    #expect(refreshed.accessToken == first.stdout.trimmingCharacters(in: .newlines))
    let secrets = [refreshed.accessToken, try #require(refreshed.refreshToken)]

    let revoke = try await TestProcess.run(TestProcess.tokenctl, ["revoke", "ada"], environment: setup.viaAgent())
    #expect(revoke.status == 0, "\(revoke.stderr)")
    // The agent learns of the revoke through the keyring's signal, which may come after
    // the first requests: three rounds of requests at most, and a scan after each.
    var left: [Int] = []
    for _ in 0..<3 {
      for _ in 0..<40 {
        let other = try await TestProcess.run(TestProcess.tokenctl, ["token", "grace"], environment: setup.viaAgent())
        #expect(other.status == 0, "\(other.stderr)")
      }
      left = try Self.occurrences(of: secrets, inProcess: agent.process.pid)
      if left == [0, 0] { break }
    }
    #expect(left == [0, 0], "copies of the revoked access token and refresh token left in the agent: \(left)")
    // The scan finds what is there: the path of the socket the agent listens on.
    let held = try Self.occurrences(of: [setup.socket], inProcess: agent.process.pid)
    #expect(held[0] > 0, "the scan found no copy of the agent's socket path")
    await AgentIntegrationTests.finish(agent, secrets: secrets)
  }
}
