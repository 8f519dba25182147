import ProcessRuntime
import Synchronization
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// Receives the authorization response from the user, who pastes the address the browser
/// was sent to (or just the code) into the terminal: for `--paste`, when the browser runs
/// on another machine than tokenctl, or the provider only allows an out-of-band redirect.
///
/// A pasted address gives its query; when the query is empty and there is a fragment, the
/// fragment, because a few providers answer in the fragment (`response_mode=fragment`).
/// A bare code (no `=`, `?` or spaces) becomes a response with `code` alone, which carries
/// no `state`: the judge decides whether that is acceptable.
public struct ManualPasteReceiver: RedirectReceiver {
  public let redirectURI: String
  private let readLine: @Sendable () -> String?
  private let write: @Sendable (String) -> Void

  /// Authorization codes are short, and a whole redirect address is a few hundred bytes to
  /// a couple of KiB; more is not a paste of one.
  public static let maximumLineLength = 8 << 10

  static let prompt = "Paste the address your browser was sent to (or the code): "

  /// - Parameters:
  ///   - redirectURI: the `redirect_uri` of the authorization request, such as
  ///     `urn:ietf:wg:oauth:2.0:oob` or a loopback address where nothing listens.
  ///   - readLine: reads one line without its end; nil at end of input. It may block: it
  ///     runs on a thread of its own. Defaults to standard input.
  ///   - write: shows a prompt or a message. Defaults to standard error.
  public init(
    redirectURI: String, readLine: @escaping @Sendable () -> String? = ManualPasteReceiver.readStandardInputLine,
    write: @escaping @Sendable (String) -> Void = ManualPasteReceiver.writeStandardError
  ) {
    self.redirectURI = redirectURI
    self.readLine = readLine
    self.write = write
  }

  /// Asks for the address or code until `judge` accepts or rejects what the user pastes.
  ///
  /// - Throws: `TokenKitError` `.signInTimedOut` after `timeout`, `.signInFailed` at the
  ///   end of input; `CancellationError` when the task is cancelled.
  public func receive(
    timeout: Duration, judge: @escaping @Sendable (AuthorizationCallback) -> CallbackVerdict
  ) async throws -> AuthorizationCallback {
    let deadline = ContinuousClock.now + timeout
    while true {
      write(Self.prompt)
      guard let line = try await nextLine(until: deadline, timeout: timeout) else {
        throw TokenKitError(
          .signInFailed, "no input: nothing was pasted before the end of standard input",
          remedy: .pasteAtATerminal)
      }
      guard line.utf8.count <= Self.maximumLineLength else {
        write("That line is longer than \(Self.maximumLineLength >> 10) KiB; paste only the address.\n")
        continue
      }
      let trimmed = line.trimmingASCIIWhitespace()
      if trimmed.isEmpty { continue }
      guard let callback = Self.callback(from: trimmed) else {
        write("That is neither an address nor a code.\n")
        continue
      }
      switch judge(callback) {
      case .accept, .reject:
        return callback
      case .ignore(let reason):
        write("\(reason)\n")
      }
    }
  }

  /// The response in a pasted line: an address's query (or fragment), a bare query, or a
  /// bare code; nil for anything else. Package-visible for the fuzz targets.
  package static func callback(from line: String) -> AuthorizationCallback? {
    guard !line.contains(where: { $0 == " " || $0 == "\t" }) else { return nil }
    if let question = line.firstIndex(of: "?") {
      let afterQuestion = line[line.index(after: question)...]
      let query = afterQuestion.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
      if !query.isEmpty { return AuthorizationCallback(query: query) }
    }
    if let hash = line.firstIndex(of: "#") {
      let fragment = line[line.index(after: hash)...]
      if !fragment.isEmpty { return AuthorizationCallback(query: fragment) }
    }
    if line.contains("://") || line.contains("?") { return nil }  // An address with no response in it.
    if line.contains("=") { return AuthorizationCallback(query: line) }  // `code=…&state=…` alone.
    return AuthorizationCallback(parameters: [.init("code", line)])
  }

  /// Reads a line on a thread of its own, racing the deadline and cancellation.
  ///
  /// A line still being read when time runs out stays unread: the reading thread waits on
  /// until input or the end of the process, which follows such a failure.
  private func nextLine(until deadline: ContinuousClock.Instant, timeout: Duration) async throws -> String? {
    let race = LineRace()
    let readLine = readLine
    let timer = Task {
      try? await Task.sleep(until: deadline, clock: .continuous)
      race.finish(.failure(TokenKitError(.signInTimedOut, "nothing was pasted within \(DurationText.format(timeout))")))
    }
    defer { timer.cancel() }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        race.start(continuation)
        let started = DetachedThread.start { race.finish(.success(readLine())) }
        if !started { race.finish(.failure(TokenKitError(.signInFailed, "no thread to read the pasted address on"))) }
      }
    } onCancel: {
      race.finish(.failure(CancellationError()))
    }
  }

  /// Reads one line from standard input, keeping at most one byte more than
  /// `maximumLineLength` (the rest of a longer line is read and dropped).
  ///
  /// Byte by byte with read(2), not through stdio: nothing past the line is consumed.
  @Sendable public static func readStandardInputLine() -> String? { readLine(from: 0) }

  /// Reads one line from `descriptor`, as ``readStandardInputLine()`` does.
  public static func readLine(from descriptor: Int32) -> String? {
    var bytes: [UInt8] = []
    var byte: UInt8 = 0
    while true {
      let count = Glibc.read(descriptor, &byte, 1)
      if count < 0 && errno == EINTR { continue }
      guard count == 1 else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
      if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
      if bytes.count <= maximumLineLength { bytes.append(byte) }
    }
  }

  @Sendable public static func writeStandardError(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
      let count = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { return }
      bytes = bytes.dropFirst(count)
    }
  }
}

/// Resumes a continuation once, with whichever of the line, the timeout or the
/// cancellation comes first.
private final class LineRace: Sendable {
  private struct State {
    var continuation: CheckedContinuation<String?, any Error>?
    var early: Result<String?, any Error>?
  }
  private let state = Mutex(State())

  func start(_ continuation: CheckedContinuation<String?, any Error>) {
    let early = state.withLock { state in
      if state.early == nil { state.continuation = continuation }
      return state.early
    }
    if let early { continuation.resume(with: early) }
  }

  func finish(_ result: Result<String?, any Error>) {
    let continuation = state.withLock { state -> CheckedContinuation<String?, any Error>? in
      guard let continuation = state.continuation else {
        if state.early == nil { state.early = result }
        return nil
      }
      state.continuation = nil
      state.early = result  // Marks it finished, so later results are dropped.
      return continuation
    }
    continuation?.resume(with: result)
  }
}
