import Foundation
import NativeAppSupport
import TestSupport
import Testing
import TokenKit

/// A `localhost` redirect reaches whichever loopback address the browser resolves
/// `localhost` to: the listener holds the port on both, so no other program can answer in
/// its place on ::1.
@Suite(.timeLimit(.minutes(1))) struct LoopbackRedirectListenerDualStackTests {
  static let judge = LoopbackRedirectListenerTests.judge
  static let noIPv6 = "this machine cannot bind ::1"

  @Test(.enabled(if: SocketAddress.isIPv6LoopbackAvailable, Comment(rawValue: noIPv6)))
  func aLocalhostRedirectOnIPv6CompletesTheSignIn() async throws {
    let log = RecordedLog()
    let listener = try LoopbackRedirectListener(host: "localhost", path: "/callback", log: log.record)
    let port = Int(listener.port)
    #expect(log.lines == ["waiting for the sign-in redirect on 127.0.0.1 and [::1], port \(port)"])
    #expect(try RawHTTPClient.listeningAddresses(port: port, ipv6: true) == ["00000000000000000000000001000000"])
    let receiving = Task { try await listener.receive(timeout: .seconds(20), judge: Self.judge) }
    let request = { (query: String) in "GET /callback?\(query) HTTP/1.1\r\nHost: localhost:\(port)\r\n\r\n" }

    // The same rules on either address: a wrong state is answered 400 and the wait goes on.
    let forged = try await RawHTTPClient.exchange("::1", port: port, request("code=forged&state=bad"))
    #expect(forged.status == 400)
    let good = try await RawHTTPClient.exchange("::1", port: port, request("code=v6&state=good"))
    #expect(good.status == 200)
    #expect(try await receiving.value["code"] == "v6")

    // One code, then nothing listens on either address.
    #expect(await RawHTTPClient.isEventuallyRefused("::1", port: port))
    #expect(await RawHTTPClient.isEventuallyRefused(port: port))
  }

  @Test(.enabled(if: SocketAddress.isIPv6LoopbackAvailable, Comment(rawValue: noIPv6)))
  func nobodyElseCanTakeTheIPv6LoopbackPort() throws {
    let listener = try LoopbackRedirectListener(host: "localhost")
    let error = #expect(throws: LoopbackSocket.BindFailure.self) {
      try LoopbackSocket(address: "::1", port: Int(listener.port), listening: true, reusingAddress: true)
    }
    #expect(error?.errno == EADDRINUSE)
  }

  @Test(.enabled(if: SocketAddress.isIPv6LoopbackAvailable, Comment(rawValue: noIPv6)))
  func aFixedPortTakenOnIPv6IsReported() throws {
    let squatter = try LoopbackSocket(address: "::1", listening: true)
    let error = #expect(throws: TokenKitError.self) {
      try LoopbackRedirectListener(host: "localhost", port: UInt16(squatter.port))
    }
    #expect(error?.code == .signInFailed)
    #expect(error?.message.contains("[::1]:\(squatter.port)") == true, "\(String(describing: error?.message))")
    #expect(error?.recovery != nil)
  }

  @Test func anIPLiteralRedirectUsesIPv4Only() async throws {
    let listener = try LoopbackRedirectListener(host: "127.0.0.1")
    let port = Int(listener.port)
    #expect(try RawHTTPClient.listeningAddresses(port: port, ipv6: true).isEmpty)
    if SocketAddress.isIPv6LoopbackAvailable {
      #expect(RawHTTPClient.isRefused("::1", port: port))
    }
  }

  // MARK: Without IPv6

  @Test(
    .enabled(
      if: !SocketAddress.isIPv6LoopbackAvailable,
      "this machine has ::1; theFallbackIsTakenWhereIPv6IsDisabled runs this test where it has not"))
  func withoutIPv6ALocalhostListenerUsesIPv4AndSaysSo() async throws {
    let log = RecordedLog()
    let listener = try LoopbackRedirectListener(host: "localhost", path: "/callback", log: log.record)
    let port = Int(listener.port)
    #expect(listener.redirectURI == "http://localhost:\(port)/callback")
    #expect(
      log.lines.contains { $0.hasPrefix("listening on 127.0.0.1:\(port) only: ::1 cannot be used (") }, "\(log.lines)")
    #expect(try RawHTTPClient.listeningAddresses(port: port) == ["0100007F"])
    let receiving = Task { try await listener.receive(timeout: .seconds(20), judge: Self.judge) }
    let answer = try await RawHTTPClient.exchange(
      port: port, "GET /callback?code=v4&state=good HTTP/1.1\r\nHost: localhost:\(port)\r\n\r\n")
    #expect(answer.status == 200)
    #expect(try await receiving.value["code"] == "v4")
  }

  /// Runs the test above in this test binary again, in a network namespace whose loopback
  /// has IPv6 turned off, so that the fallback is tested on a machine that has ::1 too.
  @Test(.enabled("needs unprivileged user and network namespaces (unshare -rn)") { await Self.canUnshare() })
  func theFallbackIsTakenWhereIPv6IsDisabled() async throws {
    let directory = try TemporaryDirectory()
    let testBinary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    let script =
      "PATH=/usr/sbin:/sbin:$PATH; ip link set lo up && echo 1 > /proc/sys/net/ipv6/conf/lo/disable_ipv6 && "
      + "exec \"$0\" --testing-library swift-testing --filter withoutIPv6ALocalhostListenerUsesIPv4AndSaysSo"
    let child = try TestProcess(
      "unshare", ["-rn", "/bin/sh", "-c", script, testBinary], stdout: directory.path("out"),
      stderr: directory.path("err"))
    let status = await child.exitStatus()
    let output = [directory.path("out"), directory.path("err")]
      .map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" }.joined()
    #expect(status == 0, "\(output)")
    // Passed, not skipped: the namespace really had no ::1.
    #expect(output.contains("withoutIPv6ALocalhostListenerUsesIPv4AndSaysSo() passed"), "\(output)")
  }

  static func canUnshare() async -> Bool {
    guard let probe = try? TestProcess("unshare", ["-rn", "/bin/true"]) else { return false }
    return await probe.exitStatus() == 0
  }
}
