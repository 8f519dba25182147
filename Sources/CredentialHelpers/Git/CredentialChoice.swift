import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The account chosen for a request, with the git settings of its type.
public struct CredentialChoice: Sendable, Hashable {
  public var account: Account
  public var git: GitIntegration
  /// The account's tokens as the search that chose it found them, when it read them.
  public var stored: StoredAccount?

  public init(account: Account, git: GitIntegration, stored: StoredAccount? = nil) {
    self.account = account
    self.git = git
    self.stored = stored
  }

  /// The username the host wants with the token.
  public var username: String {
    switch git.username {
    case .literal(let name): return name
    case .accountName: return account.name
    }
  }

  /// The answer to `request` with `tokens`: a bearer token when both git and the type can
  /// use one (git announces `capability[]=authtype`), else the username the type wants
  /// and the token as password; with the token's expiry, so git does not reuse it later.
  public func answer(with tokens: TokenSet, to request: CredentialMessage) -> CredentialMessage {
    var answer = CredentialMessage()
    if git.bearer, request.values("capability").contains("authtype") {
      answer.append("capability", "authtype")
      answer["authtype"] = "Bearer"
      answer["credential"] = tokens.accessToken
    } else {
      answer["username"] = username
      answer["password"] = tokens.accessToken
    }
    if let expiry = tokens.expiresAt {
      answer["password_expiry_utc"] = String(Int(expiry.timeIntervalSince1970))
    }
    return answer
  }
}
