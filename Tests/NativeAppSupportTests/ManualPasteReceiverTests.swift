import Foundation
import NativeAppSupport
import Synchronization
import Testing
import TokenKit

/// The paste receiver with a scripted terminal, and its standard-input reader on a pipe.
@Suite(.timeLimit(.minutes(1))) struct ManualPasteReceiverTests {
  /// Lines to hand out, and everything written.
  final class Terminal: Sendable {
    private let lines: Mutex<[String]>
    private let written = Mutex("")

    init(_ lines: [String]) { self.lines = Mutex(lines) }

    var output: String { written.withLock { $0 } }

    func receiver() -> ManualPasteReceiver {
      ManualPasteReceiver(
        redirectURI: "urn:ietf:wg:oauth:2.0:oob",
        readLine: { self.lines.withLock { $0.isEmpty ? nil : $0.removeFirst() } },
        write: { text in self.written.withLock { $0 += text } })
    }
  }

  static let prompt = "Paste the address your browser was sent to (or the code): "

  /// Accepts a code with `state=s` or no state (a bare code), rejects errors, ignores the rest.
  static let judge: @Sendable (AuthorizationCallback) -> CallbackVerdict = { callback in
    if let error = callback["error"] { return .reject(message: error) }
    guard callback["code"] != nil else { return .ignore(reason: "That address has no code in it.") }
    return callback["state"] == nil || callback["state"] == "s" ? .accept : .ignore(reason: "That answer is stale.")
  }

  func receive(_ lines: [String]) async throws -> (callback: AuthorizationCallback, output: String) {
    let terminal = Terminal(lines)
    let callback = try await terminal.receiver().receive(timeout: .seconds(10), judge: Self.judge)
    return (callback, terminal.output)
  }

  @Test func aPastedAddressGivesItsQuery() async throws {
    let (callback, output) = try await receive(["http://127.0.0.1:8080/cb?code=abc%2Fd&state=s\r"])
    #expect(callback.parameters == [.init("code", "abc/d"), .init("state", "s")])
    #expect(output == Self.prompt)
  }

  @Test func aFragmentWhenTheQueryIsEmpty() async throws {
    #expect(try await receive(["http://localhost/cb#code=f&state=s"]).callback["code"] == "f")
    #expect(try await receive(["http://localhost/cb?#code=f2&state=s"]).callback["code"] == "f2")
    // The query wins over a fragment.
    #expect(try await receive(["http://localhost/cb?code=q&state=s#code=f"]).callback["code"] == "q")
  }

  @Test func aBareCodeOrQuery() async throws {
    #expect(try await receive(["  4/0AbC-xyz_123  "]).callback.parameters == [.init("code", "4/0AbC-xyz_123")])
    #expect(try await receive(["code=c&state=s"]).callback["code"] == "c")
  }

  @Test func asksAgainAfterJunkAndIgnoredAnswers() async throws {
    let lines = [
      "", "not a code", "https://idp.example/authorize?client_id=x&state=s", "https://idp.example/cb",
      "http://localhost/cb?code=old&state=t", String(repeating: "a", count: 9000),
      "http://localhost/cb?code=good&state=s",
    ]
    let (callback, output) = try await receive(lines)
    #expect(callback["code"] == "good")
    #expect(
      output
        == Self.prompt + Self.prompt + "That is neither an address nor a code.\n" + Self.prompt
        + "That address has no code in it.\n" + Self.prompt + "That is neither an address nor a code.\n"
        + Self.prompt + "That answer is stale.\n" + Self.prompt
        + "That line is longer than 8 KiB; paste only the address.\n" + Self.prompt)
    #expect(!output.contains("old") && !output.contains("good"))
  }

  @Test func aRejectionEndsTheWait() async throws {
    #expect(try await receive(["http://localhost/?error=access_denied&state=s"]).callback["error"] == "access_denied")
  }

  @Test func endOfInput() async throws {
    let terminal = Terminal(["junk junk"])
    let error = await #expect(throws: TokenKitError.self) {
      try await terminal.receiver().receive(timeout: .seconds(10), judge: Self.judge)
    }
    #expect(error?.code == .signInFailed)
    #expect(error?.message.hasPrefix("no input") == true)
  }

  /// The error tells a timeout from the reader's end of input (`no input`), however long a
  /// busy machine takes; the time limit only ends a wait that never times out.
  @Test(.timeLimit(.minutes(10))) func timesOutWhileTheUserDoesNothing() async throws {
    let receiver = ManualPasteReceiver(
      redirectURI: "urn:ietf:wg:oauth:2.0:oob",
      readLine: {
        // Longer than any starvation of the test machine, so the timeout always wins.
        sleep(3600)
        return nil
      }, write: { _ in })
    let error = await #expect(throws: TokenKitError.self) {
      try await receiver.receive(timeout: .milliseconds(200), judge: Self.judge)
    }
    #expect(error?.code == .signInTimedOut)
    #expect(error?.message == "nothing was pasted within 0.2 s")
  }

  /// Cancelled, the wait ends with `CancellationError`, not the timeout's error nor the
  /// reader's end of input, which the error tells apart however long it took.
  @Test func cancellationStopsTheWait() async throws {
    let receiver = ManualPasteReceiver(
      redirectURI: "urn:ietf:wg:oauth:2.0:oob",
      readLine: {
        // Longer than any starvation of the test machine, so the cancellation always wins.
        sleep(3600)
        return nil
      }, write: { _ in })
    let waiting = Task { try await receiver.receive(timeout: .seconds(600), judge: Self.judge) }
    try await Task.sleep(for: .milliseconds(100))
    waiting.cancel()
    await #expect(throws: CancellationError.self) { try await waiting.value }
  }

  @Test func standardInputLinesAreBounded() throws {
    // Standard input becomes a pipe for the duration; no other test reads it.
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    let saved = dup(0)
    dup2(ends[0], 0)
    close(ends[0])
    defer {
      dup2(saved, 0)
      close(saved)
    }
    let input = "first line\r\nsecond\n" + String(repeating: "a", count: 9000) + "\nlast, without newline"
    let written = input.withCString { write(ends[1], $0, strlen($0)) }
    #expect(written == input.utf8.count)
    close(ends[1])
    #expect(ManualPasteReceiver.readStandardInputLine() == "first line\r")
    #expect(ManualPasteReceiver.readStandardInputLine() == "second")
    #expect(ManualPasteReceiver.readStandardInputLine()?.utf8.count == ManualPasteReceiver.maximumLineLength + 1)
    #expect(ManualPasteReceiver.readStandardInputLine() == "last, without newline")
    #expect(ManualPasteReceiver.readStandardInputLine() == nil)
  }
}
