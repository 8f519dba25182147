import Testing
import TokenKit

@Suite struct PKCETests {
  /// RFC 7636 Appendix B: 32 octets, their base64url verifier, and its S256 challenge.
  @Test func computesTheChallengeOfAppendixB() throws {
    let octets: [UInt8] = [
      116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214, 191,
      240, 91, 88, 5, 88, 83, 132, 141, 121,
    ]
    #expect(Base64URL.encode(octets) == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
    let pkce = try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
    #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    #expect(pkce.method == "S256")
  }

  @Test func generatesA43CharacterVerifierOfUnreservedCharacters() throws {
    let pkce = PKCE()
    #expect(pkce.verifier.count == 43)
    #expect(pkce.verifier.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) })
    // A generated verifier passes its own validation and yields the same challenge.
    #expect(try PKCE(verifier: pkce.verifier).challenge == pkce.challenge)
    #expect(pkce.challenge.count == 43)
  }

  @Test func generatesDifferentVerifiers() {
    let verifiers = Set((0..<200).map { _ in PKCE().verifier })
    #expect(verifiers.count == 200)
  }

  @Test(arguments: [43, 128])
  func acceptsTheLengthLimits(length: Int) throws {
    _ = try PKCE(verifier: String(repeating: "a", count: length))
  }

  @Test(arguments: [
    String(repeating: "a", count: 42), String(repeating: "a", count: 129), "",
    String(repeating: "a", count: 42) + "+", String(repeating: "a", count: 42) + "/",
    String(repeating: "a", count: 42) + " ", String(repeating: "a", count: 42) + "=",
    String(repeating: "a", count: 42) + "é",
  ])
  func rejectsVerifiersOutsideRFC7636(verifier: String) {
    let error = #expect(throws: TokenKitError.self) { try PKCE(verifier: verifier) }
    #expect(error?.code == .signInFailed)
    if !verifier.isEmpty { #expect(error?.description.contains(verifier) == false) }
  }

  @Test func describesItselfWithoutTheVerifier() throws {
    let pkce = PKCE()
    for text in [pkce.description, String(reflecting: pkce), "\(pkce)"] {
      #expect(!text.contains(pkce.verifier))
      #expect(text.contains(pkce.challenge))
    }
    var dumped = ""
    dump(pkce, to: &dumped)
    #expect(!dumped.contains(pkce.verifier))
  }

  @Test(arguments: [(32, 43), (16, 22), (1, 2), (0, 0)])
  func randomTokensAreBase64URLOfTheRequestedBytes(bytes: Int, characters: Int) {
    let token = RandomToken.make(bytes: bytes)
    #expect(token.count == characters)
    #expect(Base64URL.decode(token)?.count == bytes)
  }

  @Test func randomTokensDiffer() {
    #expect(Set((0..<200).map { _ in RandomToken.make() }).count == 200)
    #expect(RandomToken.make().count == 43)
  }
}
