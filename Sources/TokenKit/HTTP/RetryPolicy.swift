/// How an exchange with a server waits and asks again when the server says it is busy:
/// HTTP 429 or 503 (RFC 9110 §15.6.4, RFC 6585 §4), or `temporarily_unavailable` (RFC
/// 6749 §4.1.2.1), honouring `Retry-After` (RFC 9110 §10.2.3).
///
/// Bounded in attempts and in total waiting, so that a command answers in seconds: a
/// server that asks for longer is not waited for, and the error says when to try again.
/// Whoever retries on their own schedule (the agent refreshing ahead) backs off with the
/// error's `retryAfter`. Only answers that say the request was not processed are retried;
/// a refresh token sent to a server that answered 503 is still the current one.
public struct RetryPolicy: Sendable {
  /// Asks after the first one, at most.
  public var attempts: Int
  /// The most a command waits in all: a person is waiting for it.
  public var budget: Duration
  /// The wait when the server names none.
  public var defaultPause: Duration
  /// Waits; injected so that tests do not.
  public var sleep: @Sendable (Duration) async throws -> Void

  public init(
    attempts: Int, budget: Duration, defaultPause: Duration = .seconds(1),
    sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
  ) {
    self.attempts = attempts
    self.budget = budget
    self.defaultPause = defaultPause
    self.sleep = sleep
  }

  /// Two more attempts within 6 s: a short blip is ridden out, a maintenance window is not
  /// waited through by a person at a prompt.
  public static let standard = RetryPolicy(attempts: 2, budget: .seconds(6))
  /// No second attempt.
  public static let none = RetryPolicy(attempts: 0, budget: .zero)

  /// How long to wait before attempt `attempt + 1` after `error`, having waited `waited`
  /// already; nil: give up and report `error`.
  public func pause(before attempt: Int, after error: AuthorizationServiceError, waited: Duration) -> Duration? {
    guard attempt <= attempts, let asked = Self.retryable(error) else { return nil }
    let pause = asked.map { Duration.seconds($0) } ?? defaultPause
    return waited + pause <= budget ? pause : nil
  }

  /// Whether `error` asks to be retried, and after how many seconds when it says (the
  /// outer optional: retryable; the inner: the server's wait).
  static func retryable(_ error: AuthorizationServiceError) -> Int?? {
    switch error {
    case .httpStatus(let status, let retryAfter, _) where status == 429 || status == 503:
      return .some(retryAfter)
    case .oauth(let oauth, let status)
    where oauth.code == OAuthError.temporarilyUnavailable || status == 429 || status == 503:
      return .some(oauth.retryAfter)
    default:
      return nil
    }
  }

  /// `Retry-After` in seconds: delay-seconds only (the HTTP-date form is rare from APIs and
  /// would tie the wait to our clock agreeing with the server's). Negative and absurd
  /// values are ignored.
  public static func seconds(retryAfter header: String?) -> Int? {
    guard let header, let value = Int(header.filter { $0 != " " && $0 != "\t" }), value >= 0, value < 86_400 * 7
    else { return nil }
    return value
  }
}
