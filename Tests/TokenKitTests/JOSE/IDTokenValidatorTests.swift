import Foundation
import Testing
import TokenKit

extension JOSETests {
  @Suite struct IDTokenValidatorTests {
    typealias F = JOSEFixtures

    static let validator = IDTokenValidator(issuer: F.issuer, clientID: F.clientID, keys: F.publishedKeys)
    static let now = F.now.timeIntervalSince1970

    /// Validates `compact`, expecting an `invalidIDToken` error that names `check` and
    /// quotes neither the token, any part of it, nor the nonce.
    static func expectFailure(
      _ compact: String, nonce: String? = "n-0", validator: IDTokenValidator = validator, check: String,
      sourceLocation: SourceLocation = #_sourceLocation
    ) {
      let error = #expect(throws: TokenKitError.self, sourceLocation: sourceLocation) {
        try validator.validate(compact, nonce: nonce, clock: F.clock)
      }
      guard let error else { return }
      #expect(error.code == .invalidIDToken, sourceLocation: sourceLocation)
      #expect(error.message.contains(check), "\(error.message)", sourceLocation: sourceLocation)
      #expect(error.recovery != nil, sourceLocation: sourceLocation)
      for secret in compact.split(separator: ".").map(String.init) + [nonce ?? "", "n-0", "n-1"] where !secret.isEmpty {
        #expect(!error.description.contains(secret), "\(error.description)", sourceLocation: sourceLocation)
      }
    }

    @Test(arguments: [("RS256", "rsa-1", F.SigningKey.rsa), ("ES256", "ec-1", .p256), ("PS256", "rsa-1", .rsa)])
    func acceptsAValidToken(alg: String, kid: String, key: F.SigningKey) throws {
      let claims = try Self.validator.validate(
        F.token(F.claims(["oid": "object-7", "tid": "tenant-9", "groups": ["a"]]), alg: alg, kid: kid, key: key),
        nonce: "n-0", clock: F.clock)
      #expect(claims.issuer == F.issuer)
      #expect(claims.subject == "user-42")
      #expect(claims.audience == [F.clientID])
      #expect(claims.expiresAt == F.now.addingTimeInterval(3600))
      #expect(claims.issuedAt == F.now.addingTimeInterval(-10))
      #expect(claims.nonce == "n-0")
      #expect(claims.preferredUsername == "ada")
      #expect(claims.email == "ada@example.org")
      #expect(claims.name == "Ada Lovelace")
      #expect(claims.signatureVerified)
      #expect(claims.string("oid") == "object-7")
      #expect(claims.string("tid") == "tenant-9")
      #expect(claims.string("groups") == nil)
      #expect(claims.string("absent") == nil)
      #expect(!claims.description.contains("n-0"))
    }

    struct Case: Sendable, CustomTestStringConvertible {
      var name: String
      var changes: [String: JSONValue?]
      var check: String
      var testDescription: String { name }
    }

    @Test(arguments: [
      Case(
        name: "wrong issuer", changes: ["iss": "https://other.example"],
        check: "issued by https://other.example, not by the expected issuer https://issuer.example"),
      Case(name: "issuer with trailing slash", changes: ["iss": "https://issuer.example/"], check: "expected issuer"),
      Case(
        name: "wrong audience", changes: ["aud": "someone-else"], check: "is for someone-else, not for this client id"),
      Case(
        name: "audience list without us", changes: ["aud": ["x", "y"], "azp": "x"], check: "not for this client id"),
      Case(name: "several audiences, no azp", changes: ["aud": [.string(F.clientID), "other"]], check: "azp"),
      Case(
        name: "several audiences, azp another client",
        changes: ["aud": [.string(F.clientID), "other"], "azp": "other"],
        check: "issued to the client other (azp)"),
      Case(name: "one audience, azp another client", changes: ["azp": "other"], check: "issued to the client other"),
      Case(name: "expired", changes: ["exp": .number(now - 3600)], check: "expired at 2027-01-15T07:00:00Z"),
      Case(name: "issued in the future", changes: ["iat": .number(now + 3600)], check: "was issued at"),
      Case(name: "not yet valid", changes: ["nbf": .number(now + 3600)], check: "not valid before"),
      Case(name: "nonce mismatch", changes: ["nonce": "n-1"], check: "nonce does not match the one this sign-in sent"),
      Case(name: "nonce missing", changes: ["nonce": .none], check: "carries no nonce, but this sign-in sent one"),
      Case(name: "nonce not a string", changes: ["nonce": 7], check: "carries no nonce"),
      Case(name: "no subject", changes: ["sub": .none], check: "subject (sub)"),
      Case(name: "empty subject", changes: ["sub": ""], check: "subject (sub)"),
      Case(name: "no audience", changes: ["aud": .none], check: "audience (aud)"),
      Case(name: "empty audience list", changes: ["aud": []], check: "audience (aud)"),
      Case(name: "no expiry", changes: ["exp": .none], check: "expiry time (exp)"),
      Case(name: "expiry not a number", changes: ["exp": "tomorrow"], check: "exp that is not a number"),
      Case(name: "no issue time", changes: ["iat": .none], check: "issue time (iat)"),
      Case(name: "no issuer", changes: ["iss": .none], check: "issuer (iss)"),
    ])
    func refusesTokensThatFailACheck(_ test: Case) {
      Self.expectFailure(F.token(F.claims(test.changes)), check: test.check)
    }

    @Test func refusesATamperedPayloadBeforeTrustingItsClaims() {
      let parts = F.token().split(separator: ".")
      let forged = Base64URL.encode(F.json(.object(F.claims(["sub": "admin"]))))
      Self.expectFailure("\(parts[0]).\(forged).\(parts[2])", check: "signature does not match")
    }

    @Test func refusesUnsignedHMACAndUnknownKeyTokens() {
      Self.expectFailure(F.token(alg: "none", key: .unsigned), check: "not signed")
      Self.expectFailure(F.token(alg: "HS256", key: .hmacWithPublicKey), check: "shared-secret MAC")
      Self.expectFailure(F.token(kid: "unknown"), check: "not in the issuer's key set")
      Self.expectFailure(F.token(alg: "ES256", kid: "ec-1", key: .stranger), check: "signature does not match")
    }

    @Test func refusesAnAccessTokenPassedOffAsAnIDToken() {
      Self.expectFailure(F.token(header: ["typ": "at+jwt"]), check: "access token")
    }

    @Test func acceptsSeveralAudiencesWithOurAzp() throws {
      let claims = try Self.validator.validate(
        F.token(F.claims(["aud": [.string(F.clientID), "api"], "azp": .string(F.clientID)])), nonce: "n-0",
        clock: F.clock)
      #expect(claims.audience == [F.clientID, "api"])
      #expect(claims.authorizedParty == F.clientID)
    }

    @Test func ignoresTheTokensNonceWhenTheSignInSentNone() throws {
      let claims = try Self.validator.validate(F.token(F.claims(["nonce": "n-1"])), nonce: nil, clock: F.clock)
      #expect(claims.nonce == "n-1")
      _ = try Self.validator.validate(F.token(F.claims(["nonce": .none])), nonce: nil, clock: F.clock)
    }

    /// Each time claim against the default five minutes of skew, one second either side of the edge.
    @Test(arguments: [
      ("exp", -299.0, true), ("exp", -300, false), ("exp", -301, false),
      ("iat", 299, true), ("iat", 300, true), ("iat", 301, false),
      ("nbf", 299, true), ("nbf", 300, true), ("nbf", 301, false),
    ])
    func toleratesFiveMinutesOfClockSkew(claim: String, offset: Double, valid: Bool) throws {
      let compact = F.token(F.claims([claim: .number(Self.now + offset)]))
      if valid {
        _ = try Self.validator.validate(compact, nonce: "n-0", clock: F.clock)
      } else {
        Self.expectFailure(compact, check: "the 5 min allowed for clock differences")
      }
    }

    @Test func honoursAConfiguredClockSkew() throws {
      let strict = IDTokenValidator(issuer: F.issuer, clientID: F.clientID, keys: F.publishedKeys, clockSkew: .zero)
      _ = try strict.validate(F.token(F.claims(["exp": .number(Self.now + 1)])), nonce: "n-0", clock: F.clock)
      Self.expectFailure(F.token(F.claims(["exp": .number(Self.now)])), validator: strict, check: "expired")
      Self.expectFailure(
        F.token(F.claims(["iat": .number(Self.now + 1)])), validator: strict, check: "the 0 s allowed")
      #expect(IDTokenValidator.defaultClockSkew == .seconds(300))
    }

    @Test func withoutKeysTheSignatureIsNotCheckedAndTheClaimsSaySo() throws {
      let trusting = IDTokenValidator(issuer: F.issuer, clientID: F.clientID, keys: nil)
      let parts = F.token().split(separator: ".")
      let claims = try trusting.validate("\(parts[0]).\(parts[1]).AAAA", nonce: "n-0", clock: F.clock)
      #expect(!claims.signatureVerified)
      // The other checks still apply, and `none` is still refused.
      Self.expectFailure(F.token(F.claims(["iss": "https://x.example"])), validator: trusting, check: "expected issuer")
      Self.expectFailure(F.token(alg: "none", key: .unsigned), validator: trusting, check: "not signed")
    }

    @Test func decodesClaimsWithoutValidating() throws {
      let compact = F.token(F.claims(["exp": .number(Self.now - 86_400), "iss": "https://elsewhere.example"]))
      let claims = try IDTokenClaims(unverified: compact)
      #expect(claims.issuer == "https://elsewhere.example")
      #expect(!claims.signatureVerified)
      #expect(throws: TokenKitError.self) { try IDTokenClaims(unverified: F.token(F.claims(["sub": .none]))) }
    }

    // MARK: OpenID Connect Core §12.2

    static let previous = try! IDTokenClaims(unverified: F.token())

    @Test func acceptsARefreshedTokenWithoutANonce() throws {
      let refreshed = F.token(F.claims(["nonce": .none, "iat": .number(Self.now), "email": "new@example.org"]))
      let claims = try Self.validator.validateRefreshed(refreshed, previous: Self.previous, clock: F.clock)
      #expect(claims.email == "new@example.org")
      #expect(claims.signatureVerified)
    }

    @Test(arguments: [
      Case(name: "other user", changes: ["sub": "user-43"], check: "different user (sub)"),
      Case(
        name: "other audience", changes: ["aud": [.string(F.clientID), "api"], "azp": .string(F.clientID)],
        check: "audience"),
      Case(name: "azp appears", changes: ["azp": .string(F.clientID)], check: "authorized party (azp)"),
      Case(name: "expired", changes: ["exp": .number(now - 3600)], check: "expired"),
      Case(name: "bad issuer", changes: ["iss": "https://other.example"], check: "expected issuer"),
    ])
    func refusesARefreshedTokenThatChangesIdentity(_ test: Case) {
      let refreshed = F.token(F.claims(test.changes.merging(["nonce": .none]) { $1 }))
      let error = #expect(throws: TokenKitError.self) {
        try Self.validator.validateRefreshed(refreshed, previous: Self.previous, clock: F.clock)
      }
      #expect(error?.code == .invalidIDToken)
      #expect(error?.message.contains(test.check) == true, "\(error?.message ?? "")")
    }

    @Test func refusesARefreshedTokenFromAnotherIssuerThanTheFirst() throws {
      let first = try IDTokenClaims(unverified: F.token(F.claims(["iss": "https://old.example"])))
      let error = #expect(throws: TokenKitError.self) {
        try Self.validator.validateRefreshed(F.token(), previous: first, clock: F.clock)
      }
      #expect(error?.message.contains("not by https://old.example") == true)
    }
  }
}
