import NativeAppSupport

/// The pages the browser shows at the end of `tokenctl login`: tokenctl's name and the
/// terminal the user came from, which the loopback listener's own pages, made for any
/// app, do not name.
enum SignInPages {
  static let success = LoopbackRedirectListener.page(
    title: "Signed in", windowTitle: "tokenctl: Signed in",
    escapedParagraph: LoopbackRedirectListener.escapeHTML(
      "Signed in. You can close this window and return to the terminal."))

  @Sendable static func failure(escapedMessage: String) -> String {
    LoopbackRedirectListener.page(
      title: "Not signed in", windowTitle: "tokenctl: Not signed in",
      escapedParagraph:
        "tokenctl could not sign you in: \(escapedMessage)<br>You can close this window and return to the terminal.")
  }
}
