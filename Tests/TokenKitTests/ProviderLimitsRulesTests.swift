import Foundation
import TestSupport
import Testing
import TokenKit

/// The rules behind what tokenctl says of a provider's limits, on values alone:
/// ``UnmeetableMargin`` and ``CarriedScopes``.
@Suite struct ProviderLimitsRulesTests {
  static let now = Date(timeIntervalSince1970: 1_800_000_000)

  static func tokens(lifetime: Double, issuedAgo: Double = 0, access: String = "opaque") -> TokenSet {
    let issued = now.addingTimeInterval(-issuedAgo)
    return TokenSet(accessToken: access, expiresAt: issued.addingTimeInterval(lifetime), issuedAt: issued)
  }

  @Test(arguments: [
    // A margin the lifetime cannot give, and the largest useful one: ten seconds less,
    // or half the lifetime for short ones.
    (lifetime: 60.0, asked: 120.0, useful: 50 as Int?),
    (lifetime: 60, asked: 61, useful: 50),
    (lifetime: 8, asked: 30, useful: 4),
    // Met: the token gives that much.
    (lifetime: 60, asked: 50, useful: nil),
    (lifetime: 3600, asked: 120, useful: nil),
  ])
  func aMarginIsUnmeetableOnlyWhenTheLifetimeCannotGiveIt(lifetime: Double, asked: Double, useful: Int?) {
    let shortfall = UnmeetableMargin(asked: asked, handedOut: Self.tokens(lifetime: lifetime), now: Self.now)
    #expect(shortfall?.largestUseful == useful)
    #expect(shortfall.map { $0.lifetime == Int(lifetime) && $0.asked == Int(asked) } ?? true)
  }

  /// A long-lived token another process refreshed a while ago falls short once, by its
  /// age: the next refresh gives the margin, so that is no limit of the server's.
  @Test func anOlderTokenThatLivesLongerThanTheMarginIsNoShortfall() {
    let tokens = Self.tokens(lifetime: 3600, issuedAgo: 3550)
    #expect(UnmeetableMargin(asked: 120, handedOut: tokens, now: Self.now) == nil)
    #expect(UnmeetableMargin(asked: 120, handedOut: TokenSet(accessToken: "a"), now: Self.now) == nil)
  }

  @Test func aJWTsScopeClaimIsWhatTheTokenCarriesWhateverWasAsked() {
    for claim: JSONValue in [.string("openid profile email"), .array(["openid", "profile", "email"])] {
      for name in ["scope", "scp"] {
        let tokens = Self.tokens(lifetime: 60, access: IDTokenSigner.sign([name: claim]))
        let carried = CarriedScopes(tokens, asked: ["openid", "phone"])
        #expect(carried == CarriedScopes(scopes: ["openid", "profile", "email"], confirmed: true), "\(name)")
      }
    }
  }

  @Test func scopesTheServerNamedAreConfirmedAndAskedOnesAreNot() {
    var tokens = Self.tokens(lifetime: 60)
    #expect(
      CarriedScopes(tokens, asked: ["openid", "phone"]) == CarriedScopes(scopes: ["openid", "phone"], confirmed: false))
    tokens.scope = ["openid"]
    #expect(CarriedScopes(tokens, asked: ["openid", "phone"]) == CarriedScopes(scopes: ["openid"], confirmed: true))
    // A JWT without either claim says nothing either.
    let silent = Self.tokens(lifetime: 60, access: IDTokenSigner.sign(["sub": "ada"]))
    #expect(!CarriedScopes(silent, asked: ["phone"]).confirmed)
  }
}
