import Foundation
import NativeAppSupport
import TestSupport
import Testing
import TokenKit

/// Connections that send nothing cannot keep the browser's redirect out.
///
/// The clocks start only once the listener answers a request, so that they time the
/// listener's own thread, not how soon a busy test run gets round to starting `receive`;
/// and the socket calls that block run on threads of their own, never on the pool the
/// other tests share.
@Suite(.timeLimit(.minutes(1))) struct LoopbackRedirectListenerCrowdingTests {
  static let judge = LoopbackRedirectListenerTests.judge
  let client = CurlHTTPTransport(connectTimeout: .seconds(2), totalTimeout: .seconds(5))

  @Test func idleConnectionsOfAnotherProcessDoNotCrowdOutTheRedirect() async throws {
    let log = RecordedLog()
    let listener = try LoopbackRedirectListener(log: log.record)
    let receiving = Task { try await listener.receive(timeout: .seconds(30), judge: Self.judge) }
    try await RawHTTPClient.waitUntilServing(port: Int(listener.port))
    // Four times the listener's slots, reopened as soon as the listener closes one.
    let holder = try await IdleConnectionHolder(port: Int(listener.port), count: 64, seconds: 40)
    let started = ContinuousClock.now
    let response = try await client.send(
      HTTPRequest(method: "GET", url: URL(string: "\(listener.redirectURI)?code=c&state=good")!))
    let elapsed = ContinuousClock.now - started
    #expect(response.status == 200)
    #expect(try await receiving.value["code"] == "c")
    // Well before the sign-in's timeout, and before the 5 s an idle connection once held
    // its slot.
    #expect(elapsed < .milliseconds(4500))
    // The holder did crowd the listener.
    #expect(log.lines.contains { $0.hasPrefix("more than 16 connections") }, "\(log.lines)")
    _ = holder
  }

  @Test func aSilentConnectionIsClosedSoon() async throws {
    // The client's receive timeout (5 s) is the limit: a read that returns 0 is the close.
    let closedAfter = try await Self.timeUntilClosed { socket in
      var byte: UInt8 = 0
      return recv(socket, &byte, 1, 0) == 0
    }
    let elapsed = try #require(closedAfter, "the listener did not close the silent connection within 5 s")
    #expect(elapsed < .milliseconds(4000))
  }

  @Test func aTricklingRequestLineDoesNotHoldItsSlotForever() async throws {
    // One byte of a never-ending request line every 200 ms, for at most 12 s.
    let closedAfter = try await Self.timeUntilClosed { socket in
      for _ in 0..<60 {
        var byte = UInt8(ascii: "a")
        if send(socket, &byte, 1, Int32(MSG_NOSIGNAL)) != 1 { return true }
        usleep(200_000)
      }
      return false
    }
    let elapsed = try #require(closedAfter, "the listener kept a trickling connection for 12 s")
    #expect(elapsed < .seconds(10))
  }

  /// How long a connection to a serving listener lasts while `client` uses it, on a thread
  /// of its own, until `client` sees the listener close it (returns true); nil when
  /// `client` gave up first.
  static func timeUntilClosed(_ client: @escaping @Sendable (Int32) -> Bool) async throws -> Duration? {
    let listener = try LoopbackRedirectListener()
    let receiving = Task { try await listener.receive(timeout: .seconds(20), judge: Self.judge) }
    defer { receiving.cancel() }
    let port = Int(listener.port)
    try await RawHTTPClient.waitUntilServing(port: port)
    return try await onOwnThread { () throws -> Duration? in
      let socket = try RawHTTPClient.connect(port: port).get()
      defer { close(socket) }
      let started = ContinuousClock.now
      return client(socket) ? ContinuousClock.now - started : nil
    }
  }

}
