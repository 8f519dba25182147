/// The small HTML pages the loopback listener answers the browser with.
///
/// The default pages name no program: an app embedding the listener is not tokenctl, and
/// gives its own pages (``LoopbackRedirectListener/page(title:escapedParagraph:)``) if it
/// wants its name on them.
enum LoopbackResponse {
  static let defaultSuccessMessage = "Signed in. You can close this window."

  /// The success page when the caller gives none.
  static let defaultSuccessPage = page(title: "Signed in", paragraph: escape(defaultSuccessMessage))

  /// The failure page when the caller gives none; `escapedMessage` is already HTML-escaped.
  static func defaultFailurePage(escapedMessage: String) -> String {
    page(
      title: "Not signed in",
      paragraph: "The sign-in did not finish: \(escapedMessage)<br>You can close this window.")
  }

  /// A complete response: status line, fields and body.
  ///
  /// `no-store` and `no-referrer` because the address bar still shows the code: the page
  /// must not be cached, and nothing it loads may learn the address.
  static func encode(status: Int, html: String, extraFields: [String] = []) -> [UInt8] {
    let body = Array(html.utf8)
    let fields =
      [
        "HTTP/1.1 \(status) \(reason(status))",
        "Content-Type: text/html; charset=utf-8",
        "Content-Length: \(body.count)",
        "Connection: close",
        "Cache-Control: no-store",
        "Referrer-Policy: no-referrer",
        "X-Content-Type-Options: nosniff",
        "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'",
      ] + extraFields
    return Array((fields.joined(separator: "\r\n") + "\r\n\r\n").utf8) + body
  }

  /// Escapes text for HTML content and attribute values.
  static func escape(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for character in text.unicodeScalars {
      switch character {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&#39;"
      default: out.unicodeScalars.append(character)
      }
    }
    return out
  }

  /// A page headed `title`, with `windowTitle` (default: the same) in the browser's tab
  /// (both plain text), and `paragraph` (HTML).
  static func page(title: String, windowTitle: String? = nil, paragraph: String) -> String {
    """
    <!DOCTYPE html>
    <html lang="en"><head><meta charset="utf-8"><title>\(escape(windowTitle ?? title))</title>
    <style>body{font-family:sans-serif;margin:3em auto;max-width:36em;line-height:1.5}</style></head>
    <body><h1>\(escape(title))</h1><p>\(paragraph)</p></body></html>

    """
  }

  private static func reason(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 400: "Bad Request"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 431: "Request Header Fields Too Large"
    default: "Error"
    }
  }
}
