import Foundation
import TestSupport
import Testing

/// A process that holds thousands of idle connections to the agent's socket does not
/// stall the agent's other clients: its connections beyond a few are
/// closed at once, the rest after a second of silence, and a real client meanwhile gets
/// its answer from the agent, not by falling back to the direct path.
@Suite(.serialized, .timeLimit(.minutes(2))) struct AgentFloodTests {
  /// Opens `count` connections to `path` and sends nothing on them.
  static func holdIdle(_ count: Int, path: String) throws -> [Int32] {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    var held: [Int32] = []
    for _ in 0..<count {
      guard let fd = try? RawAgentSocket.connect(path) else { break }
      held.append(fd)
    }
    return held
  }

  /// Whether the agent has closed its end of `fd`.
  static func isClosedByPeer(_ fd: Int32) -> Bool {
    var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    guard poll(&entry, 1, 0) > 0 else { return false }
    var byte: UInt8 = 0
    return recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) == 0 || entry.revents & Int16(POLLHUP) != 0
  }

  @Test func idleConnectionsOfOneProcessDoNotStallAnotherClient() async throws {
    let setup = try await AgentIntegrationTests.Setup()
    defer { setup.cleanUp() }
    let ada = try await setup.seed(name: "ada", access: "agent-test-flood-\(UUID().uuidString)", expiresIn: 7200)
    let agent = try await setup.startAgent()
    let held = try Self.holdIdle(3000, path: setup.socket)
    defer { for fd in held { close(fd) } }
    #expect(held.count >= 2000, "could open only \(held.count) connections")
    let before = try await agent.requests()
    let client = try await BoundedRun.run(
      TestProcess.tokenctl, ["token", "ada"], environment: setup.viaAgent(), seconds: 60)
    #expect(client.result?.stdout == ada.tokens.accessToken + "\n", "\(String(describing: client.result))")
    // The agent answered it (the status request counts too).
    #expect(try await agent.requests() >= before + 2, "the client fell back to the direct path")
    // A second of silence costs each idle connection its place.
    try await Task.sleep(for: .seconds(2))
    let closed = held.filter(Self.isClosedByPeer).count
    #expect(closed == held.count, "\(held.count - closed) idle connections are still held open by the agent")
    await AgentIntegrationTests.finish(agent, secrets: [ada.tokens.accessToken, ada.tokens.refreshToken ?? ""])
  }
}
