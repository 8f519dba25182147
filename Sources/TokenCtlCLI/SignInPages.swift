import NativeAppSupport
import TokenKit

/// The pages the browser shows at the end of `tokenctl login`: tokenctl's name, the account
/// signed in or what failed and the command to run next, and the terminal the user came
/// from, which the loopback listener's own pages, made for any app, do not name.
///
/// The listener holds the browser's answer until the sign-in has ended
/// (``LoopbackRedirectListener/finish(_:)``): the redirect brings only a code, and the
/// exchange, the account's details and the keyring come after it.
enum SignInPages {
  static let closing = "You can close this window and return to the terminal."

  /// The page for how the sign-in ended.
  @Sendable static func ending(_ ending: SignInEnding) -> String {
    switch ending {
    case .signedIn(let account):
      LoopbackRedirectListener.page(
        title: "Signed in", windowTitle: "tokenctl: Signed in",
        escapedParagraph: LoopbackRedirectListener.escapeHTML("Signed in as \(account). \(closing)"))
    case .failed(let message, let hint):
      failure(
        escapedMessage: LoopbackRedirectListener.escapeHTML(message)
          + (hint.map { "<br>" + LoopbackRedirectListener.escapeHTML($0) } ?? ""))
    }
  }

  /// When the sign-in has not ended a while after the browser came back (a keyring waiting
  /// to be unlocked, a slow server): the terminal will say how it ends.
  static let stillFinishing = LoopbackRedirectListener.page(
    title: "Back from the sign-in", windowTitle: "tokenctl: Back from the sign-in",
    escapedParagraph: LoopbackRedirectListener.escapeHTML(
      "The provider sent you back to tokenctl, which is still finishing the sign-in: the terminal says how it "
        + "ends. \(closing)"))

  @Sendable static func failure(escapedMessage: String) -> String {
    LoopbackRedirectListener.page(
      title: "Not signed in", windowTitle: "tokenctl: Not signed in",
      escapedParagraph:
        "tokenctl could not sign you in: \(escapedMessage)<br>\(LoopbackRedirectListener.escapeHTML(closing))")
  }
}
