import Crypto
import Foundation
import Synchronization
import TokenKit
import TokenStoreTesting

/// A wall clock that tests move by hand.
final class TestClock: WallClock, Sendable {
  private let instant: Mutex<Date>

  init(_ now: Date = OAuthFixtures.now) { instant = Mutex(now) }

  var now: Date { instant.withLock { $0 } }

  func advance(by seconds: Double) { instant.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// A `DiscoveryCache` in memory that counts what it is asked.
final class MemoryDiscoveryCache: DiscoveryCache, Sendable {
  private let entries = Mutex<[String: (document: [UInt8], fetchedAt: Date)]>([:])
  private let storeCount = Mutex(0)

  init() {}

  func load(issuer: String) -> (document: [UInt8], fetchedAt: Date)? { entries.withLock { $0[issuer] } }

  func store(issuer: String, document: [UInt8], fetchedAt: Date) {
    entries.withLock { $0[issuer] = (document, fetchedAt) }
    storeCount.withLock { $0 += 1 }
  }

  var stores: Int { storeCount.withLock { $0 } }
}

/// Account locks within one process, by polling like `FileAccountLocks` does, that record
/// how many holders there ever were at once.
final class MemoryAccountLocks: AccountLocking, Sendable {
  private struct State {
    var held: Set<String> = []
    var acquisitions = 0
  }
  private let state = Mutex(State())

  init() {}

  func acquire(_ key: AccountKey, group: String, timeout: Duration) async throws -> any AccountLockHandle {
    let name = "\(group)\u{0}\(key.type)\u{0}\(key.id)"
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while true {
      let acquired = state.withLock { state in
        guard !state.held.contains(name) else { return false }
        state.held.insert(name)
        state.acquisitions += 1
        return true
      }
      if acquired { return Handle(locks: self, name: name) }
      guard ContinuousClock.now < deadline else {
        throw TokenKitError(.storeFailure, "lock \(key) timed out")
      }
      try await Task.sleep(for: .milliseconds(1))
    }
  }

  var acquisitions: Int { state.withLock { $0.acquisitions } }
  var isHeld: Bool { state.withLock { !$0.held.isEmpty } }

  fileprivate func release(_ name: String) { _ = state.withLock { $0.held.remove(name) } }

  private final class Handle: AccountLockHandle, Sendable {
    let locks: MemoryAccountLocks
    let name: String
    let released = Mutex(false)
    init(locks: MemoryAccountLocks, name: String) {
      self.locks = locks
      self.name = name
    }
    func release() {
      let first = released.withLock { released in
        defer { released = true }
        return !released
      }
      if first { locks.release(name) }
    }
  }
}

/// Values shared by the OAuth and account tests.
enum OAuthFixtures {
  static let now = Date(timeIntervalSince1970: 1_800_000_000)
  static let issuer = "https://issuer.example"
  static let clientID = "tokenctl-test"
  static let secret = "s3cr3t-client-secret"

  // Loopback addresses nothing listens on: the transport is scripted, these are never dialed.
  static let authorizationURL = URL(string: "http://127.0.0.1:9/authorize")!
  static let tokenURL = URL(string: "http://127.0.0.1:9/token")!
  static let deviceURL = URL(string: "http://127.0.0.1:9/device")!
  static let revocationURL = URL(string: "http://127.0.0.1:9/revoke")!
  static let jwksURL = URL(string: "http://127.0.0.1:9/jwks")!
  static let userinfoURL = URL(string: "http://127.0.0.1:9/userinfo")!

  static func endpoints(
    revocation: Bool = true, device: Bool = true, jwks: Bool = true, userinfo: Bool = false
  ) -> Endpoints {
    Endpoints(
      authorization: authorizationURL, token: tokenURL, deviceAuthorization: device ? deviceURL : nil,
      revocation: revocation ? revocationURL : nil, userinfo: userinfo ? userinfoURL : nil,
      jwks: jwks ? jwksURL : nil, issuer: issuer)
  }

  static func descriptor(
    id: String = "corp", endpoints: Endpoints = endpoints(), clientSecret: String? = nil,
    authentication: ClientAuthenticationMethod = .none, aliases: [String: String] = [:],
    scopes: [String] = ["openid", "profile", "offline_access"]
  ) -> EndpointDescriptor {
    EndpointDescriptor(
      id: id, displayName: "Corp", endpoints: .fixed(endpoints), defaultScopes: scopes, clientID: clientID,
      clientSecret: clientSecret, tokenEndpointAuthentication: authentication, deviceGrantErrorAliases: aliases)
  }

  static func registry(_ descriptors: EndpointDescriptor...) throws -> AccountTypeRegistry {
    var registry = AccountTypeRegistry()
    for descriptor in descriptors.isEmpty ? [descriptor()] : descriptors {
      try registry.register(descriptor, source: "test")
    }
    return registry
  }

  static func configuration(_ descriptor: EndpointDescriptor = descriptor()) -> ServiceConfiguration {
    guard case .fixed(let endpoints) = descriptor.endpoints else { fatalError("fixed endpoints only") }
    return ServiceConfiguration(
      descriptor: descriptor, endpoints: endpoints,
      client: ClientIdentity(
        id: descriptor.clientID ?? clientID, secret: descriptor.clientSecret,
        authentication: descriptor.tokenEndpointAuthentication),
      issuer: endpoints.issuer)
  }

  static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}

/// Signs ID tokens with a P-256 key whose JWK Set the tests serve at `jwks_uri`.
enum IDTokenSigner {
  static let key = P256.Signing.PrivateKey()
  static let keyID = "test-es256"

  /// The JWK Set with the public key.
  static var jwks: String {
    let point = key.publicKey.x963Representation.dropFirst()  // 0x04 || x || y
    let x = Base64URL.encode(point.prefix(32))
    let y = Base64URL.encode(point.suffix(32))
    return #"{"keys":[{"kty":"EC","crv":"P-256","use":"sig","kid":"\#(keyID)","x":"\#(x)","y":"\#(y)"}]}"#
  }

  /// Claims that pass validation at `now` for the fixtures' issuer and client.
  static func claims(
    subject: String = "user-42", nonce: String?, now: Date, name: String = "ada@example.org"
  ) -> [String: JSONValue] {
    var claims: [String: JSONValue] = [
      "iss": .string(OAuthFixtures.issuer), "sub": .string(subject), "aud": .string(OAuthFixtures.clientID),
      "exp": .number(now.timeIntervalSince1970 + 3600), "iat": .number(now.timeIntervalSince1970),
      "preferred_username": .string(name),
    ]
    if let nonce { claims["nonce"] = .string(nonce) }
    return claims
  }

  static func sign(_ claims: [String: JSONValue]) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let header: JSONValue = .object(["alg": .string("ES256"), "typ": .string("JWT"), "kid": .string(keyID)])
    let input =
      Base64URL.encode(try! encoder.encode(header)) + "."
      + Base64URL.encode(try! encoder.encode(JSONValue.object(claims)))
    let signature = try! key.signature(for: Array(input.utf8))
    return input + "." + Base64URL.encode(signature.rawRepresentation)
  }
}

extension TokenKitError {
  /// The message and the recovery, for assertions that a secret appears in neither.
  var fullText: String { message + "\n" + (recovery ?? "") }
}
