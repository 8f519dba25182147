/// config.toml's `[agent]` table (tokenctl-config(5), tokenctl-agent(1)).
public struct AgentSettings: Sendable, Hashable {
  /// `keep_fresh`: refresh every account ahead of time, not only those the agent handed a
  /// token for.
  public var keepFresh = false
  /// `refresh_at_percent`: how much of a token's lifetime passes before the agent
  /// refreshes it, from 50 to 95.
  public var refreshAtPercent = 75

  public static let keys = ["keep_fresh", "refresh_at_percent"]

  public init(keepFresh: Bool = false, refreshAtPercent: Int = 75) {
    self.keepFresh = keepFresh
    self.refreshAtPercent = refreshAtPercent
  }
}
