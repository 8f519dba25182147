#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One entry of the grants file: an application allowed or denied in a group.
public struct Grant: Sendable, Equatable {
  public enum State: Sendable, Equatable {
    /// Allowed these accounts, or every account of the group when nil.
    case allowed([GrantedAccount]?)
    /// Denied: the agent refuses without asking.
    case denied
  }

  /// The application's name (``ApplicationIdentity/name``): the canonical executable
  /// path, as `/proc/PID/exe` shows it, or `flatpak:APP_ID`.
  public var application: String
  /// The group; nil for a denial in every group.
  public var group: String?
  public var state: State
  /// When the application was allowed or denied (the last change).
  public var since: Date
  /// When the application last received a token under this grant, to the minute.
  public var lastUse: Date?

  public init(application: String, group: String?, state: State, since: Date, lastUse: Date? = nil) {
    self.application = application
    self.group = group
    self.state = state
    self.since = since
    self.lastUse = lastUse
  }

  /// The accounts this entry lets the application see; nil for a denial.
  public var scope: GrantScope? {
    switch state {
    case .allowed(nil): return .all
    case .allowed(let accounts?): return .accounts(Set(accounts.map(\.key)))
    case .denied: return nil
    }
  }
}
