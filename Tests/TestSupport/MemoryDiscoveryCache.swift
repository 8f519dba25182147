import Foundation
import Synchronization
import TokenKit

/// A `DiscoveryCache` in memory that counts what it is asked.
public final class MemoryDiscoveryCache: DiscoveryCache, Sendable {
  private let entries = Mutex<[String: (document: [UInt8], fetchedAt: Date)]>([:])
  private let storeCount = Mutex(0)

  public init() {}

  public func load(issuer: String) -> (document: [UInt8], fetchedAt: Date)? { entries.withLock { $0[issuer] } }

  public func store(issuer: String, document: [UInt8], fetchedAt: Date) {
    entries.withLock { $0[issuer] = (document, fetchedAt) }
    storeCount.withLock { $0 += 1 }
  }

  public var stores: Int { storeCount.withLock { $0 } }
}
