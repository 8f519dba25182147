import Foundation
import NativeAppSupport
import Testing
import TokenKit

/// Connections that send nothing cannot keep the browser's redirect out (issue 11,
/// finding 4).
@Suite(.timeLimit(.minutes(1))) struct LoopbackRedirectListenerCrowdingTests {
  static let judge = LoopbackRedirectListenerTests.judge
  let client = CurlHTTPTransport(connectTimeout: .seconds(2), totalTimeout: .seconds(5))

  @Test func idleConnectionsOfAnotherProcessDoNotCrowdOutTheRedirect() async throws {
    let log = RecordedLog()
    let listener = try LoopbackRedirectListener(log: log.record)
    let receiving = Task { try await listener.receive(timeout: .seconds(30), judge: Self.judge) }
    // Four times the listener's slots, reopened as soon as the listener closes one.
    let holder = try await IdleConnectionHolder(port: Int(listener.port), count: 64, seconds: 40)
    let started = ContinuousClock.now
    let response = try await client.send(
      HTTPRequest(method: "GET", url: URL(string: "\(listener.redirectURI)?code=c&state=good")!))
    #expect(response.status == 200)
    #expect(try await receiving.value["code"] == "c")
    // Well before the sign-in's timeout, and before the 5 s an idle connection once held
    // its slot, on however busy a machine.
    #expect(ContinuousClock.now - started < .milliseconds(4500))
    // The holder did crowd the listener.
    #expect(log.lines.contains { $0.hasPrefix("more than 16 connections") }, "\(log.lines)")
    _ = holder
  }

  @Test func aSilentConnectionIsClosedSoon() async throws {
    let listener = try LoopbackRedirectListener()
    let receiving = Task { try await listener.receive(timeout: .seconds(20), judge: Self.judge) }
    defer { receiving.cancel() }
    let silent = try RawHTTPClient.connect(port: Int(listener.port)).get()
    defer { close(silent) }
    let started = ContinuousClock.now
    var byte: UInt8 = 0
    // The client's receive timeout (5 s) is the limit: a read that returns 0 is the close.
    #expect(recv(silent, &byte, 1, 0) == 0)
    #expect(ContinuousClock.now - started < .milliseconds(4000))
  }

  @Test func aTricklingRequestLineDoesNotHoldItsSlotForever() async throws {
    let listener = try LoopbackRedirectListener()
    let receiving = Task { try await listener.receive(timeout: .seconds(20), judge: Self.judge) }
    defer { receiving.cancel() }
    let slow = try RawHTTPClient.connect(port: Int(listener.port)).get()
    defer { close(slow) }
    let started = ContinuousClock.now
    var closed = false
    // One byte of a never-ending request line every 200 ms, for at most 12 s.
    for _ in 0..<60 {
      var byte = UInt8(ascii: "a")
      if send(slow, &byte, 1, Int32(MSG_NOSIGNAL)) != 1 {
        closed = true
        break
      }
      try await Task.sleep(for: .milliseconds(200))
    }
    #expect(closed)
    #expect(ContinuousClock.now - started < .seconds(10))
  }
}
