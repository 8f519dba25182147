import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Bitbucket is no OpenID provider, so `GET /2.0/user` names who signed in.
public struct BitbucketBehavior: AccountTypeBehavior {
  /// Bitbucket Cloud's API, for a descriptor that names none.
  static let defaultAPIBase = URL(string: "https://api.bitbucket.org/2.0")!

  public init() {}

  /// The account is the user's `uuid` (`{…}`), which a rename does not change; the name is
  /// the `username`, or the `display_name` where Bitbucket no longer shows usernames.
  public func identity(
    accessToken: String, configuration: ServiceConfiguration, transport: any HTTPTransport
  )
    async throws -> AccountIdentity?
  {
    let url = (configuration.descriptor.apiBase ?? Self.defaultAPIBase).appending(path: "user")
    let request = HTTPRequest(
      method: "GET", url: url,
      headers: [HTTPHeader("Accept", "application/json"), HTTPHeader("Authorization", "Bearer \(accessToken)")])
    let response: HTTPResponse
    do {
      response = try await transport.send(request)
    } catch {
      throw TokenKitError(.transport(error), while: "ask Bitbucket who signed in")
    }
    guard response.status == 200, let user = JSONValue.parseObject(response.body) else {
      throw TokenKitError(
        .signInFailed,
        "Bitbucket answered HTTP \(response.status) to GET \(url.absoluteString), so the user is unknown",
        recovery: response.status == 403 ? "Give the OAuth consumer the Account: Read permission." : nil)
    }
    guard let uuid = user["uuid"]?.stringValue,
      let name = user["username"]?.stringValue ?? user["display_name"]?.stringValue
    else {
      throw TokenKitError(.signInFailed, "Bitbucket's answer to GET \(url.absoluteString) has no uuid and name")
    }
    return AccountIdentity(id: uuid, name: name, issuer: nil)
  }
}
