#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Fetches authorization server metadata for an issuer (OpenID Connect Discovery 1.0,
/// RFC 8414), through a cache.
public struct MetadataDiscovery: Sendable {
  public var transport: any HTTPTransport
  public var cache: (any DiscoveryCache)?
  public var clock: any WallClock
  /// How long a fetched document is used without asking again. Providers change their
  /// endpoints rarely and announce it; a day keeps sign-ins and refreshes off the
  /// discovery endpoint while picking up a change by the next day.
  public var maximumAge: Double

  public init(
    transport: any HTTPTransport, cache: (any DiscoveryCache)?, clock: any WallClock,
    maximumAge: Double = 24 * 3600
  ) {
    self.transport = transport
    self.cache = cache
    self.clock = clock
    self.maximumAge = maximumAge
  }

  /// The metadata of `issuer`: cached if fresh, else fetched and cached. When the fetch
  /// fails and a stale copy exists, the stale copy is used: endpoints outlive a network
  /// outage, and refusing a refresh because discovery is down would help no one.
  public func metadata(for issuer: URL) async throws(AuthorizationServiceError) -> AuthorizationServerMetadata {
    let key = issuer.absoluteString
    let cached = cache?.load(issuer: key)
    if let cached, clock.now.timeIntervalSince(cached.fetchedAt) < maximumAge,
      let metadata = try? AuthorizationServerMetadata(json: cached.document, expectedIssuer: key)
    {
      return metadata
    }
    do {
      let (metadata, document) = try await fetch(issuer)
      cache?.store(issuer: key, document: document, fetchedAt: clock.now)
      return metadata
    } catch {
      if Self.isTransient(error), let cached,
        let metadata = try? AuthorizationServerMetadata(json: cached.document, expectedIssuer: key)
      {
        return metadata
      }
      throw error
    }
  }

  /// A failure that says nothing about the document: no answer, or a server error.
  private static func isTransient(_ error: AuthorizationServiceError) -> Bool {
    switch error {
    case .transport: return true
    case .httpStatus(let status, _, _): return status >= 500
    default: return false
    }
  }

  private func fetch(_ issuer: URL) async throws(AuthorizationServiceError) -> (AuthorizationServerMetadata, [UInt8]) {
    var lastError = AuthorizationServiceError.malformedResponse("no discovery document for \(issuer.absoluteString)")
    for url in AuthorizationServerMetadata.discoveryURLs(for: issuer) {
      let request = HTTPRequest(method: "GET", url: url, headers: [HTTPHeader("Accept", "application/json")])
      do throws(AuthorizationServiceError) {
        let response: HTTPResponse
        do { response = try await transport.send(request) } catch { throw .transport(error) }
        let body = try AuthorizationService.body(of: response, document: "discovery document", bodyRequired: true)
        return (try AuthorizationServerMetadata(json: body, expectedIssuer: issuer.absoluteString), body)
      } catch {
        // 404 at the OpenID location is normal for a plain OAuth server: try RFC 8414's.
        lastError = error
        if case .httpStatus(404, _, _) = error { continue }
        throw error
      }
    }
    throw lastError
  }
}

/// Where fetched discovery documents are kept between runs.
public protocol DiscoveryCache: Sendable {
  func load(issuer: String) -> (document: [UInt8], fetchedAt: Date)?
  func store(issuer: String, document: [UInt8], fetchedAt: Date)
}
