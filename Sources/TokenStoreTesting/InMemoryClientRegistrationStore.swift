import Synchronization
import TokenKit

/// A `ClientRegistrationStore` in memory, for tests of code that registers clients.
public final class InMemoryClientRegistrationStore: ClientRegistrationStore, Sendable {
  private let registrations = Mutex<[String: ClientRegistration]>([:])

  public init() {}

  public func load(issuer: String) throws -> ClientRegistration? {
    registrations.withLock { $0[issuer] }
  }

  public func save(_ registration: ClientRegistration) throws {
    registrations.withLock { $0[registration.issuer] = registration }
  }

  @discardableResult
  public func remove(issuer: String) throws -> Bool {
    registrations.withLock { $0.removeValue(forKey: issuer) != nil }
  }
}
