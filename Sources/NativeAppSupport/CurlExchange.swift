import CCurl
import Synchronization
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// One request through one curl easy handle: set up, performed and cleaned up by
/// `perform()` on the thread that calls it.
///
/// `@unchecked Sendable`: the mutable state is touched only by `perform()` and by the
/// callbacks libcurl runs inside it, on the same thread. The one thing another thread
/// touches, the cancellation flag, is atomic.
final class CurlExchange: @unchecked Sendable {
  /// `host[:port]` of the request, for messages. Never the path's query or the userinfo:
  /// a query can hold a code or a token.
  let place: String
  private let request: HTTPRequest
  private let settings: CurlHTTPTransport
  private let cancelled = Atomic<Bool>(false)

  private var body: [UInt8] = []
  private var headers: [HTTPHeader] = []
  private var headerBytes = 0
  private var tooLarge = false

  /// Real responses carry a few KiB of headers; libcurl bounds each one at 100 KiB but not
  /// their number, so a hostile server could otherwise make us collect them without end.
  static let maximumHeaderBytes = 64 << 10

  init(_ request: HTTPRequest, settings: CurlHTTPTransport) {
    self.request = request
    self.settings = settings
    place = Self.place(of: request.url)
  }

  /// Asks a running `perform()` to stop; libcurl notices at its next progress call, which
  /// it makes at least once a second.
  func cancel() { cancelled.store(true, ordering: .relaxed) }

  /// Sends the request and waits for the whole response.
  func perform() -> Result<HTTPResponse, TransportError> {
    guard let handle = tokenctl_curl_easy_init() else {
      return .failure(TransportError(.other, "libcurl could not create a handle for \(place)"))
    }
    defer { tokenctl_curl_easy_cleanup(handle) }
    var headerList: UnsafeMutablePointer<curl_slist>? = nil
    defer { tokenctl_curl_slist_free_all(headerList) }
    let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    errorText.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    defer { errorText.deallocate() }
    // libcurl reads the body from this pointer during the transfer, so it must outlive
    // `curl_easy_perform`. Zeroed afterwards: it holds codes, refresh tokens, secrets.
    let requestBody = UnsafeMutableRawBufferPointer.allocate(
      byteCount: max(request.body?.count ?? 0, 1), alignment: 1)
    defer {
      memset(requestBody.baseAddress!, 0, requestBody.count)
      requestBody.deallocate()
    }

    do throws(TransportError) {
      try configure(handle, headerList: &headerList, errorText: errorText, requestBody: requestBody)
    } catch {
      return .failure(error)
    }
    if cancelled.load(ordering: .relaxed) { return .failure(cancelledError) }

    let code = tokenctl_curl_easy_perform(handle)
    guard code == CURLE_OK else { return .failure(failure(code, handle: handle, errorText: errorText)) }
    var status = 0
    _ = tokenctl_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
    return .success(HTTPResponse(status: status, headers: headers, body: body))
  }

  private func configure(
    _ handle: UnsafeMutableRawPointer, headerList: inout UnsafeMutablePointer<curl_slist>?,
    errorText: UnsafeMutablePointer<CChar>, requestBody: UnsafeMutableRawBufferPointer
  ) throws(TransportError) {
    let url = request.url
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
      throw TransportError(.other, "cannot send a request to \(place): only http and https are supported")
    }
    // The last line of defence for every caller: plain http leaves this machine for no
    // one, and is refused here before libcurl resolves or connects anything.
    guard Loopback.isSecureOrLoopback(url) else {
      throw TransportError(
        .other, "refusing to send a request to \(place) over plain http: http is only for this machine")
    }
    let method = request.method.uppercased()
    guard !method.isEmpty, method.utf8.allSatisfy(HTTPHeader.isTokenByte) else {
      throw TransportError(.other, "cannot send a request to \(place): the method is not a valid HTTP token")
    }
    let context = Unmanaged.passUnretained(self).toOpaque()

    try check(tokenctl_curl_setopt_string(handle, CURLOPT_URL, url.absoluteString), "the URL")
    try check(tokenctl_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorText), "the error buffer")
    // Threads: without NOSIGNAL libcurl uses SIGALRM for DNS timeouts, which is not
    // thread-safe.
    try check(tokenctl_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
    try check(tokenctl_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0), "FOLLOWLOCATION")
    // libcurl's defaults, set anyway: certificate and host name are always verified, and
    // no setting, environment variable or flag of ours turns that off.
    try check(tokenctl_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1), "certificate verification")
    try check(tokenctl_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2), "host name verification")
    if let authorities = settings.certificateAuthorities {
      try check(tokenctl_curl_setopt_string(handle, CURLOPT_CAINFO, authorities), "the CA certificates")
    }
    try check(tokenctl_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"), "the protocols")
    try check(tokenctl_curl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"), "the protocols")
    try check(
      tokenctl_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(settings.connectTimeout)),
      "the connect timeout")
    try check(
      tokenctl_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Self.milliseconds(settings.totalTimeout)), "the timeout")
    try check(tokenctl_curl_setopt_string(handle, CURLOPT_USERAGENT, settings.userAgent), "the user agent")
    try check(
      tokenctl_curl_setopt_off(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(settings.maximumBodySize)),
      "the size limit")

    try check(tokenctl_curl_setopt_write_function(handle, CURLOPT_WRITEFUNCTION, Self.receiveBody), "the body callback")
    try check(tokenctl_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context), "the body callback")
    try check(
      tokenctl_curl_setopt_write_function(handle, CURLOPT_HEADERFUNCTION, Self.receiveHeader), "the header callback")
    try check(tokenctl_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context), "the header callback")
    try check(tokenctl_curl_setopt_long(handle, CURLOPT_NOPROGRESS, 0), "progress")
    try check(tokenctl_curl_setopt_xferinfo_function(handle, Self.progress), "the progress callback")
    try check(tokenctl_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, context), "the progress callback")

    for header in request.headers {
      guard !header.name.isEmpty, header.name.utf8.allSatisfy(HTTPHeader.isTokenByte) else {
        throw TransportError(.other, "cannot send a request to \(place): a header name is not a valid HTTP token")
      }
      // A line break in a value would let it smuggle in another header.
      guard !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
        throw TransportError(.other, "cannot send a request to \(place): header \(header.name) has a line break")
      }
      // "Name:" alone tells libcurl to remove a header; "Name;" sends it empty.
      let line = header.value.isEmpty ? "\(header.name);" : "\(header.name): \(header.value)"
      try append(line, to: &headerList)
    }
    // libcurl would otherwise send `Expect: 100-continue` with bodies over 1 KiB and wait
    // up to a second for a server that never answers it.
    try append("Expect:", to: &headerList)
    try check(tokenctl_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, headerList), "the headers")

    let body = request.body
    switch method {
    case "GET" where body == nil:
      try check(tokenctl_curl_setopt_long(handle, CURLOPT_HTTPGET, 1), "the method")
    case "HEAD" where body == nil:
      try check(tokenctl_curl_setopt_long(handle, CURLOPT_NOBODY, 1), "the method")
    default:
      if method == "POST" || body != nil {
        let bytes = body ?? []
        if !bytes.isEmpty { requestBody.copyBytes(from: bytes) }
        try check(tokenctl_curl_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count)), "the body")
        try check(tokenctl_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, requestBody.baseAddress), "the body")
      }
      if method != "POST" {
        try check(tokenctl_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method), "the method")
      }
    }
  }

  // MARK: Callbacks, run by libcurl on the thread inside `perform()`

  private static let receiveBody: curl_write_callback = { data, size, count, context in
    let exchange = Unmanaged<CurlExchange>.fromOpaque(context!).takeUnretainedValue()
    let length = size * count
    // Returning less than `length` makes libcurl stop with CURLE_WRITE_ERROR, before the
    // rest of an oversized (for instance chunked) body is read.
    guard exchange.body.count + length <= exchange.settings.maximumBodySize else {
      exchange.tooLarge = true
      return 0
    }
    if length > 0 { exchange.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length)) }
    return length
  }

  private static let receiveHeader: curl_write_callback = { data, size, count, context in
    let exchange = Unmanaged<CurlExchange>.fromOpaque(context!).takeUnretainedValue()
    let length = size * count
    exchange.headerBytes += length
    guard exchange.headerBytes <= maximumHeaderBytes else {
      exchange.tooLarge = true
      return 0
    }
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    return exchange.takeHeaderLine(line) ? length : 0
  }

  private static let progress: curl_xferinfo_callback = { context, _, _, _, _ in
    let exchange = Unmanaged<CurlExchange>.fromOpaque(context!).takeUnretainedValue()
    return exchange.cancelled.load(ordering: .relaxed) ? 1 : 0
  }

  /// Records one header line; false to abort the transfer.
  private func takeHeaderLine(_ line: String) -> Bool {
    // Each response (a `100 Continue`, a proxy's `200 Connection established`, the real
    // one) starts with a status line; only the last response's headers count.
    if line.hasPrefix("HTTP/") {
      headers = []
      return true
    }
    guard let colon = line.firstIndex(of: ":") else { return true }  // The blank line ending the head.
    let name = String(line[..<colon]).trimmingASCIIWhitespace()
    let value = String(line[line.index(after: colon)...]).trimmingASCIIWhitespace()
    headers.append(HTTPHeader(name, value))
    // Refuse a declared oversized body before its first byte arrives.
    if request.method.uppercased() != "HEAD", name.lowercased() == "content-length", let size = Int(value),
      size > settings.maximumBodySize
    {
      tooLarge = true
      return false
    }
    return true
  }

  // MARK: Errors

  private var cancelledError: TransportError { TransportError(.other, "the request to \(place) was cancelled") }

  private func check(_ code: CURLcode, _ what: String) throws(TransportError) {
    guard code == CURLE_OK else {
      throw TransportError(.other, "libcurl refused \(what) for the request to \(place) (\(Self.describe(code)))")
    }
  }

  private func append(_ line: String, to list: inout UnsafeMutablePointer<curl_slist>?) throws(TransportError) {
    guard let longer = tokenctl_curl_slist_append(list, line) else {
      throw TransportError(.other, "out of memory building the request to \(place)")
    }
    list = longer
  }

  /// Says what went wrong from libcurl's code, the socket's errno and, for TLS only, the
  /// error buffer (TLS messages name certificates, never the URL or the body).
  private func failure(
    _ code: CURLcode, handle: UnsafeMutableRawPointer, errorText: UnsafePointer<CChar>
  )
    -> TransportError
  {
    if tooLarge || code == CURLE_FILESIZE_EXCEEDED {
      let limit = headerBytes > Self.maximumHeaderBytes ? Self.maximumHeaderBytes : settings.maximumBodySize
      let what = headerBytes > Self.maximumHeaderBytes ? "headers" : "body"
      return TransportError(
        .responseTooLarge, "the response \(what) from \(place) is larger than \(Self.sizeText(limit))")
    }
    var osErrno = 0
    _ = tokenctl_curl_getinfo_long(handle, CURLINFO_OS_ERRNO, &osErrno)
    let reason = osErrno == 0 ? nil : Self.errnoText(Int32(osErrno))
    let because = reason.map { " (\($0))" } ?? ""
    switch code {
    case CURLE_COULDNT_RESOLVE_HOST:
      return TransportError(.dnsFailure, "could not resolve the host name of \(place)")
    case CURLE_COULDNT_RESOLVE_PROXY:
      return TransportError(.dnsFailure, "could not resolve the proxy's host name to reach \(place)")
    case CURLE_COULDNT_CONNECT:
      return TransportError(.connectionFailed, "could not connect to \(place)\(because)")
    case CURLE_GOT_NOTHING:
      return TransportError(.connectionFailed, "\(place) closed the connection without answering")
    case CURLE_SEND_ERROR:
      return TransportError(.connectionFailed, "the connection to \(place) broke while sending the request\(because)")
    case CURLE_RECV_ERROR:
      return TransportError(
        .connectionFailed, "the connection to \(place) broke while receiving the response\(because)")
    case CURLE_OPERATION_TIMEDOUT:
      var connectTime: curl_off_t = 0
      _ = tokenctl_curl_getinfo_off(handle, CURLINFO_CONNECT_TIME_T, &connectTime)
      if connectTime == 0 {
        return TransportError(
          .timedOut, "could not connect to \(place) within \(DurationText.format(settings.connectTimeout))")
      }
      return TransportError(.timedOut, "no response from \(place) within \(DurationText.format(settings.totalTimeout))")
    case CURLE_ABORTED_BY_CALLBACK:
      return cancelledError
    case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_ENGINE_NOTFOUND,
      CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_INITFAILED,
      CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
      CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
      let detail = String(cString: errorText)
      // OpenSSL's "wrong version number": the first bytes back were no TLS record, which is
      // what a plain-HTTP server's answer looks like. The scheme is wrong, not the network.
      if detail.contains("wrong version number") {
        return TransportError(
          .tls,
          "TLS with \(place) failed: the server answered in plain HTTP, not TLS (\(detail)); the address says "
            + "https where the server speaks http, or names the wrong port")
      }
      return TransportError(
        .tls, "TLS with \(place) failed (\(detail.isEmpty ? Self.describe(code) : detail))")
    default:
      return TransportError(.other, "the request to \(place) failed (\(Self.describe(code)))")
    }
  }

  // MARK: Helpers

  static func place(of url: URL) -> String {
    var host = url.host ?? "(no host)"
    if host.contains(":") && !host.hasPrefix("[") { host = "[\(host)]" }
    return url.port.map { "\(host):\($0)" } ?? host
  }

  static func sizeText(_ bytes: Int) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
    if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
    return "\(bytes) bytes"
  }

  private static func describe(_ code: CURLcode) -> String {
    // libcurl's fixed text for the code, lower-cased to sit inside a sentence.
    lowercasedFirst(String(cString: tokenctl_curl_easy_strerror(code)))
  }

  private static func errnoText(_ number: Int32) -> String { lowercasedFirst(String(cString: strerror(number))) }

  private static func lowercasedFirst(_ text: String) -> String {
    guard let first = text.first else { return text }
    return first.lowercased() + text.dropFirst()
  }

  private static func milliseconds(_ duration: Duration) -> Int {
    Int(clamping: max(duration.millisecondsRoundedUp, 1))
  }

}
