import TokenKit

/// An error a D-Bus caller gets: a name a program can match on, and a message that says
/// what to do (tokenctl-dbus(7), "Errors").
public struct AgentBusError: Error, Sendable, Equatable {
  public var name: String
  public var message: String

  public init(_ name: Name, _ message: String) {
    self.name = name.rawValue
    self.message = message
  }

  public enum Name: String, Sendable, CaseIterable {
    case noSuchAccount = "org.tokenctl.Error.NoSuchAccount"
    case ambiguous = "org.tokenctl.Error.Ambiguous"
    case needsSignIn = "org.tokenctl.Error.NeedsSignIn"
    case accessDenied = "org.tokenctl.Error.AccessDenied"
    case locked = "org.tokenctl.Error.Locked"
    case unavailable = "org.tokenctl.Error.Unavailable"
    case network = "org.tokenctl.Error.Network"
    case server = "org.tokenctl.Error.Server"
    /// A call whose arguments no account could have (control characters, sizes beyond
    /// any name): D-Bus's own name for it.
    case invalidArguments = "org.freedesktop.DBus.Error.InvalidArgs"
  }

  /// The D-Bus error for an error of the core: its message and what to do, as the command
  /// line words them.
  public init(_ error: TokenKitError) {
    let name: Name
    switch error.code {
    case .noSuchAccount: name = .noSuchAccount
    case .ambiguousAccount: name = .ambiguous
    case .needsSignIn, .tokenNotValid: name = .needsSignIn
    case .keyringLocked: name = .locked
    case .networkFailure: name = .network
    case .serverError, .revocationFailed, .invalidIDToken, .signInFailed, .accessDenied: name = .server
    default: name = .unavailable
    }
    var message = error.message
    if let recovery = error.recovery { message += ". " + recovery }
    self.init(name, message)
  }
}
