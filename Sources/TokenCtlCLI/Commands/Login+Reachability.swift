import NativeAppSupport
import TokenKit

extension TokenCtl.Login {
  /// Fails at once when the authorization endpoint the browser is to be sent to cannot be
  /// reached (a server down, a host that does not resolve): without this, the browser
  /// shows its error page and tokenctl waits out the whole timeout, five minutes by
  /// default. Nothing has been opened or stored then.
  func checkReachable(
    _ type: String, options: SignInOptions, manager: AccountManager, context: CLIContext
  ) async throws {
    let configuration = try await manager.configuration(type: type, options: options)
    guard let endpoint = configuration.endpoints.authorization, let host = endpoint.host() else { return }
    let port = endpoint.port ?? (endpoint.scheme == "http" ? 80 : 443)
    let authority = endpoint.port.map { "\(host):\($0)" } ?? host
    guard let problem = ServerReachability.problem(host: host, port: port, environment: context.environment)
    else { return }
    throw TokenKitError(
      .networkFailure,
      "cannot reach \(authority), where the browser would sign in (\(problem)); no browser was opened",
      recovery: "Check the network connection, or whether the server is up, and try again.")
  }
}
