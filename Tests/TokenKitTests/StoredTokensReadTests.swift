import Testing
import TokenCtlFuzzing
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The stored token set is read without JSONDecoder, and must read every item
/// as JSONDecoder did: the same token set, or the same refusal. Each input here is read
/// both ways (`StoredTokensFuzzing`, which the `stored-tokens` fuzz target runs too).
@Suite struct StoredTokensReadTests {
  static let base = #""version":1,"access_token":"at","token_type":"Bearer""#

  /// Documents as tokenctl and other programs write them, and every way JSON can go wrong
  /// or be written oddly, member by member.
  static let documents: [String] =
    [
      #"{\#(base)}"#,
      #"{"access_token":"a","expires_at":1800000000,"id_token":"i","issued_at":1700000000,"refresh_token":"r","scope":"openid email","token_type":"Bearer","version":1}"#,
      #"{"version": 1, "access_token": "at", "token_type": "Bearer", "expires_at": 1800000000, "refresh_token": null}"#,
      "\u{FEFF}{\(base)}", " \t\r\n{\(base)}\n ", "{\(base),}", "{\(base),,}", "{,\(base)}", "{\(base)} x",
      "{\(base)}\u{0}",
      "{\(base)", "[]", "", "{}", "null", #""x""#, "{\(base)}\u{0B}", #"{\#(base),"version":2}"#,
      #"{"version":2,\#(base)}"#,
      #"{"version":2}"#, #"{"version":"1"}"#, #"{"version":true}"#,
      #"{"version":1.0,"access_token":"a","token_type":"b"}"#,
      #"{"version":1e0,"access_token":"a","token_type":"b"}"#, #"{"version":1.5}"#, #"{"version":01}"#,
      #"{"version":-0}"#,
      #"{"version":+1}"#, #"{'version':1}"#, #"{"version":1 /*c*/}"#, #"{"version":1}"#,
      #"{"version":1,"access_token":"a"}"#,
      #"{"version" : 1 , "access_token" : "a" , "token_type" : "b" , }"#,
      #"{\#(base),"z":[1,2,]}"#, #"{\#(base),"z":[,1]}"#, #"{\#(base),"z":[1,,2]}"#,
      #"{\#(base),"x":{"y":[{},[],{"a":[true,false,null]}]}}"#,
      #"{\#(base),"x":tru}"#, #"{\#(base),"x":nul}"#, #"{\#(base),"x":True}"#, #"{\#(base),"x":NaN}"#,
      #"{\#(base),"x":"unterminated}"#,
    ]
    + ["expires_at", "issued_at"].flatMap { name in
      [
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "1e18", "1.0e2",
        "1E2", "1e+2", "1E-0", "2.0e0", "-0.0", "1e400", "-1e-400", "0e5", "12345678901234567890e-5",
        "9.223372036854775807e18", "9223372036854775806.0", "1.9999999999999999999", "2.5e-1", "1.5", "-", "1.", ".5",
        "-01", "00", "\"5\"", "null", "true", "[]", "{}", "-5", "100000000000000000000",
      ].map { #"{\#(base),"\#(name)":\#($0)}"# }
    }
    + ["access_token", "refresh_token", "id_token", "scope", "token_type"].flatMap { name in
      [
        #""\ud800""#, #""\ud83d\ude00""#, #""\udc00\ud800""#, #""\ud800\u0041""#, #""\u0041""#, #""\U0041""#,
        #""\u12""#,
        #""\x""#, #""\/\b\f\n\r\t\"\\""#, #""\u00e9\u20AC""#, #""é""#, #""\u0000""#, "\"\u{7F}\"", "\"\u{1F}\"",
        "\"tab\tx\"",
        "null", "true", "1", "[]", #""a b  c""#, #""""#,
      ].map { #"{"version":1,"access_token":"a","token_type":"b","\#(name)":\#($0)}"# }
    }
    // Two members of one name: JSONDecoder takes the first.
    + [#"{\#(base),"access_token":"second"}"#, #"{"access_token":null,\#(base)}"#]

  @Test(arguments: documents)
  func readsAsJSONDecoderDoes(document: String) {
    let bytes = Array(document.utf8)
    let read = StoredTokensFuzzing.outcome { try TokenSet(storageJSON: bytes, item: "fuzz") }
    let decoded = StoredTokensFuzzing.outcome { try StoredTokensFuzzing.decode(bytes) }
    #expect(read == decoded)
  }

  /// Bytes that are not UTF-8 in a string, and objects and arrays nested deeper than
  /// JSONDecoder goes (512 levels).
  @Test func readsOddBytesAndDeepNestingAsJSONDecoderDoes() {
    var invalid = Array(#"{\#(Self.base),"refresh_token":"x"#.utf8)
    invalid += [0xFF, 0x22, 0x7D]
    var inputs = [invalid, Array(#"{\#(Self.base),"refresh_token":"x\#u{0}"}"#.utf8)]
    for depth in [100, 509, 510, 511, 512, 513, 600] {
      let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
      inputs.append(Array(#"{\#(Self.base),"z":\#(nested)}"#.utf8))
      let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
      inputs.append(Array(#"{\#(Self.base),"z":\#(objects)}"#.utf8))
    }
    for bytes in inputs {
      let read = StoredTokensFuzzing.outcome { try TokenSet(storageJSON: bytes, item: "fuzz") }
      let decoded = StoredTokensFuzzing.outcome { try StoredTokensFuzzing.decode(bytes) }
      #expect(read == decoded, "\(String(decoding: bytes.prefix(80), as: UTF8.self))")
    }
  }

  /// What tokenctl writes reads back as the same token set.
  @Test func whatIsStoredReadsBack() throws {
    let tokens = TokenSet(
      accessToken: "a\u{1}\"\\é😀", refreshToken: "r", idToken: nil,
      expiresAt: Date(timeIntervalSince1970: 1_800_000_000),
      scope: ["openid", "email"], tokenType: "Bearer", issuedAt: Date(timeIntervalSince1970: 1_700_000_000))
    let stored = try tokens.storageJSON()
    #expect(StoredTokensFuzzing.run(stored) == "read")
    let read = try TokenSet(storageJSON: stored, item: "x")
    #expect(read.accessToken == tokens.accessToken && read.scope == tokens.scope && read.expiresAt == tokens.expiresAt)
  }
}
