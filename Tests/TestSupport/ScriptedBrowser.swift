import Foundation
import Synchronization
import TokenKit

/// What the browser would bring back: a redirect receiver that hands the flow callbacks
/// made from the authorization request the flow presented, as a user signing in would.
public final class ScriptedBrowser: Sendable {
  public let redirectURI = "http://127.0.0.1:53682/callback"
  private let presented = Mutex<URL?>(nil)
  private let verdictLog = Mutex<[CallbackVerdict]>([])
  /// The callbacks to offer, in order, given the authorization request's parameters.
  public let callbacks: @Sendable ([String: String]) -> [[(String, String)]]

  public init(callbacks: @escaping @Sendable ([String: String]) -> [[(String, String)]] = ScriptedBrowser.approve) {
    self.callbacks = callbacks
  }

  /// The user approves: the server redirects with a code and the request's state.
  public static let approve: @Sendable ([String: String]) -> [[(String, String)]] = { request in
    [[("code", "AUTH-CODE"), ("state", request["state"] ?? "")]]
  }

  public var presentURL: @Sendable (URL) async -> Void { { [self] url in presented.withLock { $0 = url } } }

  public var url: URL? { presented.withLock { $0 } }
  public var verdicts: [CallbackVerdict] { verdictLog.withLock { $0 } }

  /// The presented request's parameters.
  public var request: [String: String] {
    let pairs = url?.query(percentEncoded: true).map { FormEncoding.decode($0) } ?? []
    return Dictionary(pairs, uniquingKeysWith: { first, _ in first })
  }

  public var receiver: some RedirectReceiver { Receiver(browser: self) }

  public var method: SignInMethod { .browser(receiver: receiver, presentURL: presentURL) }

  public struct Receiver: RedirectReceiver {
    let browser: ScriptedBrowser
    public var redirectURI: String { browser.redirectURI }

    public func receive(
      timeout: Duration, judge: @escaping @Sendable (AuthorizationCallback) -> CallbackVerdict
    ) async throws -> AuthorizationCallback {
      guard browser.url != nil else { throw TokenKitError(.signInFailed, "nothing was presented") }
      for pairs in browser.callbacks(browser.request) {
        let callback = AuthorizationCallback(parameters: pairs.map { .init($0.0, $0.1) })
        let verdict = judge(callback)
        browser.verdictLog.withLock { $0.append(verdict) }
        switch verdict {
        case .accept, .reject: return callback
        case .ignore: continue
        }
      }
      throw TokenKitError(.signInTimedOut, "no usable callback")
    }
  }
}
