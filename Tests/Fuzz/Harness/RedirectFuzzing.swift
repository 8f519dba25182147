import NativeAppSupport
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What reaches the redirect URI, read as the product reads it: a request head that ends
/// in a blank line goes to the loopback listener's parser and router, anything else is a
/// line pasted into `tokenctl login --paste`. Either way the callback is judged by an
/// authorization request, as the sign-in judges it.
enum RedirectFuzzing {
  /// The listener's redirect path and names, as `LoopbackRedirectListener` sets them up.
  static let path = "/callback"
  static let hostNames: Set<String> = ["127.0.0.1", "localhost"]

  /// A request that expects an `iss` (RFC 9207), and one from a server that sends none.
  /// Fixed `state` values, so that seeds can carry them.
  static let requests = [
    AuthorizationRequest(
      endpoint: URL(string: "https://issuer.example/authorize")!, clientID: "tokenctl",
      redirectURI: "http://127.0.0.1:8400/callback", scopes: ["openid", "email"],
      expectedIssuer: "https://issuer.example", state: "fuzz-state-1", pkce: pkce, nonce: "fuzz-nonce"),
    AuthorizationRequest(
      endpoint: URL(string: "https://github.example/login/oauth/authorize")!, clientID: "tokenctl",
      redirectURI: "http://127.0.0.1:8400/callback", scopes: ["repo"], state: "fuzz-state-2", pkce: pkce),
  ]
  static let pkce = try! PKCE(verifier: "fuzz-verifier-fuzz-verifier-fuzz-verifier-0123")

  /// Labels: the verdict (`accept`, `reject`, `ignore`) of the first request that does not
  /// ignore the callback; or why there is no callback: `refused` (not a request head, or
  /// neither an address nor a code), `wrong-method`, `foreign-host`, `other-path`,
  /// `too-long`.
  static func run(_ bytes: [UInt8]) -> String {
    let callback: AuthorizationCallback
    let bareCodeAllowed: Bool
    if let end = LoopbackRequest.endOfHead(in: bytes) {
      guard let request = LoopbackRequest(head: bytes[..<end]) else { return "refused" }
      _ = request.hostName
      switch request.route(path: path, hostNames: hostNames) {
      case .wrongMethod: return "wrong-method"
      case .foreignHost: return "foreign-host"
      case .otherPath: return "other-path"
      case .callback(let found): callback = found
      }
      bareCodeAllowed = false
    } else {
      // As `ManualPasteReceiver.receive` takes a line from `readStandardInputLine`.
      let line = String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
      guard line.utf8.count <= ManualPasteReceiver.maximumLineLength else { return "too-long" }
      let trimmed = line.trimmingASCIIWhitespace()
      guard !trimmed.isEmpty, let found = ManualPasteReceiver.callback(from: trimmed) else { return "refused" }
      callback = found
      bareCodeAllowed = true
    }
    _ = callback.description
    var verdicts: [String] = []
    for request in requests {
      for bare in [bareCodeAllowed, false] {
        let verdict = request.judge(callback, bareCodeAllowed: bare)
        let code = try? request.outcome(of: callback, bareCodeAllowed: bare)
        // The listener stops at an accepted callback and the flow then takes its code
        // from `outcome`: the two must agree, or a sign-in could end without a code, or
        // take one the judge refused.
        precondition((verdict == .accept) == (code != nil), "judge and outcome disagree")
        if let code { precondition(code == callback["code"] && !code.isEmpty, "outcome returned another code") }
        if bare == bareCodeAllowed { verdicts.append(label(verdict)) }
      }
    }
    return verdicts.first { $0 != "ignore" } ?? "ignore"
  }

  private static func label(_ verdict: CallbackVerdict) -> String {
    switch verdict {
    case .accept: "accept"
    case .reject: "reject"
    case .ignore: "ignore"
    }
  }
}
