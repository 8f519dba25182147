#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The users a search found, and why it stopped where it did.
public struct GraphSearchResult: Sendable, Hashable {
  /// At most the number asked for, in Graph's order.
  public var users: [GraphUser]
  /// Whether Graph had more matches than were asked for.
  public var hasMore: Bool
  /// A next-page link that was not followed because it leaves the Graph service: the
  /// token would have gone with it.
  public var refusedNextLink: URL?

  public init(users: [GraphUser], hasMore: Bool = false, refusedNextLink: URL? = nil) {
    self.users = users
    self.hasMore = hasMore
    self.refusedNextLink = refusedNextLink
  }
}
