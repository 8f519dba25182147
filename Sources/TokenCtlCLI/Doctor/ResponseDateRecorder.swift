import Synchronization
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A transport that passes requests on and keeps the `Date` header (RFC 9110 §6.6.1) of
/// the last response, with the local time it arrived: what `doctor --online` compares
/// the clock with.
final class ResponseDateRecorder: HTTPTransport {
  private let base: any HTTPTransport
  private let clock: any WallClock
  private let recorded = Mutex<(server: String, local: Date)?>(nil)

  init(_ base: any HTTPTransport, clock: any WallClock) {
    self.base = base
    self.clock = clock
  }

  func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
    let response = try await base.send(request)
    if let date = response.header("Date") {
      let now = clock.now
      recorded.withLock { $0 = (date, now) }
    }
    return response
  }

  /// The last `Date` header and when it arrived here, if a response had one.
  var lastDate: (server: String, local: Date)? { recorded.withLock { $0 } }
}
