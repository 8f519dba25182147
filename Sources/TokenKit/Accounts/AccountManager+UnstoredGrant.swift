extension AccountManager {
  /// The error for a sign-in whose tokens the store refused, once the grant they carry has
  /// been revoked at the server where it can be.
  ///
  /// The server issued a grant (a refresh token lives for weeks), and nothing holds it: the
  /// keyring was locked and stayed so, or its daemon went away, between the check before
  /// the sign-in and the write after it. Revoking it (RFC 7009 §2.1: the refresh token
  /// first, which ends the grant, then the access token, which some servers keep alive
  /// otherwise) leaves nothing valid that nobody can see or revoke. Where the type has no
  /// way to revoke, the error says the grant stays valid until it expires. Either way the
  /// store's error stays the error, with its code and its remedy: the keyring is what the
  /// user has to see to before signing in again.
  func unstored(
    _ response: TokenResponse, configuration: ServiceConfiguration, storeError: any Error
  ) async -> TokenKitError {
    let original =
      storeError as? TokenKitError
      ?? TokenKitError(.storeFailure, "the token store refused the tokens: \(storeError)")
    let outcome = await revokeUnstored(response, configuration: configuration)
    var error = TokenKitError(
      original.code, original.message + "; " + outcome + "; sign in again once the keyring works",
      recovery: original.recovery, remedy: original.remedy)
    error.retryAfter = original.retryAfter
    return error
  }

  /// Revokes the grant `response` carries, and says how that went, as a clause.
  private func revokeUnstored(_ response: TokenResponse, configuration: ServiceConfiguration) async -> String {
    let type = configuration.descriptor.id
    if configuration.endpoints.revocation != nil {
      let service = configuration.service(transport: transport)
      do {
        if let refreshToken = response.refreshToken {
          try await service.revoke(refreshToken, hint: "refresh_token")
        }
      } catch {
        return "the tokens the server issued could not be revoked there (\(error)) and stay valid until they expire"
      }
      do {
        try await service.revoke(response.accessToken, hint: "access_token")
      } catch  where response.refreshToken != nil {
        return "the grant the server issued was revoked there, but its access token could not be (\(error)) "
          + "and stays valid until it expires"
      } catch {
        return "the token the server issued could not be revoked there (\(error)) and stays valid until it expires"
      }
      return "the tokens the server issued were revoked there, so none of them is left valid"
    }
    if let behavior = registry.behavior(type), behavior.revokesTokens {
      do {
        if try await behavior.revoke(
          response.tokenSet(receivedAt: clock.now, requestedScope: nil), configuration: configuration,
          transport: transport)
        {
          return "the tokens the server issued were revoked there, so none of them is left valid"
        }
      } catch {
        return "the tokens the server issued could not be revoked there (\(error)) and stay valid until they expire"
      }
    }
    return "account type '\(type)' has no revocation endpoint, so the tokens the server issued stay valid there "
      + "until they expire"
  }
}
