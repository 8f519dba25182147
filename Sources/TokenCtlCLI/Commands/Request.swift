import ArgumentParser
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#endif

extension TokenCtl {
  /// `tokenctl request`: send one HTTP request with an account's token, as NXOAuth2Request
  /// did, and `gh api` and `az rest` do.
  struct Request: AsyncParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "request",
      abstract: "Send an HTTP request with an account's access token.",
      discussion: """
        Sends the request with `Authorization: Bearer` and the account's token, refreshed \
        first when it is about to expire. On a 401 the token is refreshed once and the \
        request sent again; a 429 or 503 with a Retry-After of up to a minute is retried \
        after that wait, up to three times.

        A relative URL (`/me` or `me`) is resolved against the account type's API base, \
        keeping its path: `graph` + `/me` is https://graph.microsoft.com/v1.0/me. Only \
        types with an API base take a path alone: the built-in ones for an API (graph, \
        github, gitlab, google, bitbucket) and type files that set api_base; the error for \
        any other names them. For other types, oidc among them, give the full https URL. An \
        absolute URL must be https (http only on the loopback address), and its origin \
        (scheme, host and port) one the account type serves (see `tokenctl types`), or \
        the URL be the userinfo endpoint of the issuer the account signed in at; \
        others need --allow-host, since the token would be given to them: HOST or \
        HOST:PORT allows https to that host and port (443 by default), an origin such as \
        http://127.0.0.1:8080 allows exactly that.

        --data sends a body (@FILE reads a file, @- standard input) and makes the method \
        POST unless --method says otherwise. Its Content-Type, unless a --header sets one, \
        is application/json when the body starts with `{` or `[`, else \
        application/x-www-form-urlencoded.

        The response body is written to standard output byte for byte (up to 1 MiB; a \
        larger one is refused). --include first prints `HTTP STATUS` and the headers, \
        then a blank line. --json prints one document: format, status, headers (names \
        lowercased, repeated ones joined with ", ") and body (parsed when the \
        Content-Type is JSON, else text). Redirects are not followed. The exit status is \
        0 for a 2xx status and 16 for any other, whose body is printed all the same; a \
        host refused without --allow-host is 14.

        --scope sends a token for exactly those scopes instead of the account's own, got \
        and kept as `tokenctl token --scope` does; a 401 refreshes that token.
        """)

    @Argument(
      help: ArgumentHelp("The account: TYPE:NAME, or a NAME that is unique.", valueName: "account"),
      completion: ShellCompletion.accounts)
    var account: String

    @Argument(help: ArgumentHelp("An absolute https URL, or a path relative to the type's API base.", valueName: "url"))
    var url: String

    @Option(
      name: [.customShort("X"), .customLong("method")],
      help: ArgumentHelp("The HTTP method (default: GET, or POST with --data).", valueName: "method"))
    var method: String?

    @Option(
      name: [.customShort("H"), .customLong("header")],
      help: ArgumentHelp("A header to send, as 'Name: value'; repeatable. Not Authorization.", valueName: "header"))
    var headers: [String] = []

    @Option(
      name: [.customShort("d"), .customLong("data")],
      help: ArgumentHelp("The request body: text, @FILE, or @- for standard input.", valueName: "body"))
    var data: String?

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the status line and headers first.")
    var include = false

    @Flag(help: "Print status, headers and body as one JSON document.")
    var json = false

    @Option(
      help: ArgumentHelp(
        "A host or HOST:PORT (https), or an origin (http://127.0.0.1:8080), the token may be sent to; repeatable.",
        valueName: "host"))
    var allowHost: [String] = []

    @OptionGroup var scopeOption: ScopeOption

    @OptionGroup var groupOption: GroupOption

    func validate() throws {
      for host in allowHost { _ = try Self.origin(naming: host) }
      if let method, method.isEmpty || !method.utf8.allSatisfy(HTTPHeader.isTokenByte) {
        throw ValidationError("The method '\(TerminalSafe.text(method))' is not an HTTP method name.")
      }
      for header in headers { _ = try Self.header(parsing: header) }
    }

    func run() async throws {
      let session = try CommandSession.open(group: groupOption.group, configured: false)
      let context = session.context
      let store = session.store
      let reference = AccountReference(parsing: account, knownTypes: Set(context.registry.ids))
      let key = try reference.resolve(in: store).account.key
      let manager = try session.configured().manager
      let target = try Self.resolve(url, against: try manager.registry.descriptor(key.type), in: manager.registry)

      var request = HTTPRequest(method: "GET", url: target, headers: try headers.map(Self.header(parsing:)))
      if let data {
        let body = try Self.body(from: data)
        request.body = body
        request.method = "POST"
        if !request.headers.contains(where: { $0.name.lowercased() == "content-type" }) {
          request.headers.append(HTTPHeader("Content-Type", Self.contentType(of: body)))
        }
      }
      if let method { request.method = method.uppercased() }

      let client = AuthorizedClient(
        manager: manager, account: key, scopes: scopeOption.scopes, sleep: context.sleep)
      let response = try await client.send(request, allowed: Set(try allowHost.map(Self.origin(naming:))))
      if json {
        context.output.write(JSONOutput.render(ResponseDocument(response)))
      } else {
        if include {
          // Header values come from the server: keep their control characters off the
          // terminal. The body is printed as it is, as curl does; it is what was asked for.
          let head = response.headers.map { TerminalSafe.text("\($0.name): \($0.value)") }
          context.output.write((["HTTP \(response.status)"] + head).joined(separator: "\n") + "\n\n")
        }
        context.output.write(bytes: response.body)
      }
      guard (200..<300).contains(response.status) else {
        // The host only: a path or query can hold an identifier the user would not log.
        let host = target.host() ?? ""
        context.output.writeError(TerminalSafe.text("tokenctl: HTTP \(response.status) from \(host)") + "\n")
        throw ExitCode(ExitStatus.httpError.rawValue)
      }
    }

    // MARK: Reading the command line

    /// An --allow-host value: `HOST[:PORT]` for https, or an origin URL such as
    /// `http://127.0.0.1:8080`.
    static func origin(naming text: String) throws -> Origin {
      guard let origin = Origin(naming: text) else {
        throw ValidationError(
          "--allow-host '\(TerminalSafe.text(text))' is not a host, a host:port, or an origin such as http://127.0.0.1:8080."
        )
      }
      return origin
    }

    /// `url` as an absolute URL: itself, or resolved against the type's API base. A path
    /// for a type without one is refused with the types of `registry` that have one.
    static func resolve(
      _ url: String, against descriptor: EndpointDescriptor, in registry: AccountTypeRegistry
    ) throws -> URL {
      if let scheme = url.firstRange(of: "://").map({ url[..<$0.lowerBound] }),
        !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) })
      {
        guard ["http", "https"].contains(scheme.lowercased()), let absolute = URL(string: url), absolute.host() != nil
        else {
          throw ValidationError("'\(TerminalSafe.text(url))' is not an http or https URL.")
        }
        return absolute
      }
      guard let base = descriptor.apiBase else {
        let withBase = registry.all.map(\.descriptor).filter { $0.apiBase != nil }.map(\.id)
        throw TokenKitError(
          .notConfigured,
          "account type '\(descriptor.id)' has no API base to resolve '\(TerminalSafe.text(url))' against: a path "
            + "alone works only for types with one ("
            + (withBase.isEmpty ? "none here" : withBase.joined(separator: ", ")) + ")",
          recovery: "Give the full https URL instead, such as https://HOST/PATH; a host the type does not serve "
            + "also needs --allow-host HOST (tokenctl-request(1)).")
      }
      // String joining rather than RFC 3986 resolution, which would drop the base's last
      // segment (`/v1.0` + `me` → `/me`): users expect `v1.0/me`.
      var baseText = base.absoluteString
      while baseText.hasSuffix("/") { baseText.removeLast() }
      guard let resolved = URL(string: baseText + "/" + url.drop(while: { $0 == "/" })) else {
        throw ValidationError("'\(TerminalSafe.text(url))' does not make a valid URL with \(baseText).")
      }
      return resolved
    }

    /// A `-H 'Name: value'` argument as a header field.
    static func header(parsing text: String) throws -> HTTPHeader {
      // A line break would let one argument smuggle in a second header.
      guard !text.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
        throw ValidationError("A --header must not contain a line break.")
      }
      guard let colon = text.firstIndex(of: ":") else {
        throw ValidationError("A --header is 'Name: value', not '\(TerminalSafe.text(text))'.")
      }
      let name = String(text[..<colon])
      guard !name.isEmpty, name.utf8.allSatisfy(HTTPHeader.isTokenByte) else {
        throw ValidationError("'\(TerminalSafe.text(name))' is not a header name.")
      }
      guard name.lowercased() != "authorization" else {
        throw ValidationError(
          "tokenctl sends the account's token as the Authorization header; a --header cannot replace it.")
      }
      let value = text[text.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
      return HTTPHeader(name, String(value))
    }

    /// The bytes `--data` names: the text itself, a file's content, or standard input.
    static func body(from data: String) throws -> [UInt8] {
      guard data.hasPrefix("@") else { return Array(data.utf8) }
      let path = String(data.dropFirst())
      if path == "-" { return try standardInput() }
      do {
        return Array(try Data(contentsOf: URL(filePath: path)))
      } catch {
        throw ValidationError("Cannot read the body from '\(TerminalSafe.text(path))'.")
      }
    }

    /// JSON for a body that looks like a JSON object or array, else a form (as curl -d).
    static func contentType(of body: [UInt8]) -> String {
      let first = body.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
      return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        ? "application/json" : "application/x-www-form-urlencoded"
    }

    private static func standardInput() throws -> [UInt8] {
      var bytes: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 65536)
      while true {
        let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count >= 0 else { throw ValidationError("Cannot read the body from standard input.") }
        if count == 0 { return bytes }
        bytes += buffer[..<count]
      }
    }

  }
}

/// `request --json`: the response as one document.
struct ResponseDocument: Encodable {
  let format = JSONOutput.formatVersion
  var status: Int
  /// Names lowercased; a repeated header's values joined with ", " (RFC 9110 §5.3).
  var headers: [String: String]
  /// The body parsed when its Content-Type is JSON, else the text (invalid UTF-8 replaced).
  var body: JSONValue

  init(_ response: HTTPResponse) {
    status = response.status
    headers = [:]
    for header in response.headers {
      let name = header.name.lowercased()
      headers[name] = headers[name].map { "\($0), \(header.value)" } ?? header.value
    }
    let media = response.mediaType ?? ""
    let isJSON = media == "application/json" || media.hasSuffix("+json")
    body =
      (isJSON ? try? JSONDecoder().decode(JSONValue.self, from: Data(response.body)) : nil)
      ?? .string(String(decoding: response.body, as: UTF8.self))
  }
}
