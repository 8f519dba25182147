import Testing
import TokenKit

extension JOSETests {
  @Suite struct Base64URLTests {
    /// RFC 4648 §10's vectors, without the padding base64url leaves off.
    @Test(arguments: [
      ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
      ("foobar", "Zm9vYmFy"),
    ])
    func encodesTheRFC4648Vectors(plain: String, encoded: String) {
      #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
      #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test func usesTheURLSafeAlphabet() {
      #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
      #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
    }

    @Test func roundTripsEveryLength() {
      var generator = SystemRandomNumberGenerator()
      for length in 0..<70 {
        let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let encoded = Base64URL.encode(bytes)
        #expect(!encoded.contains("="))
        #expect(Base64URL.decode(encoded) == bytes)
      }
    }

    @Test(arguments: ["Zg==", "Zm8="])
    func acceptsPadding(padded: String) {
      #expect(Base64URL.decode(padded) != nil)
    }

    @Test(arguments: [
      "Zm9v+", "Zm9/", "Zm 9v", "Zm9v\n", "Z", "Zm9vY", "Zg=", "Zg===", "Z===", "=", "Zh", "Zm9", "Zm€v",
    ])
    func rejects(invalid: String) {
      #expect(Base64URL.decode(invalid) == nil)
    }
  }

  @Suite struct JSONValueTests {
    @Test func parsesObjectsOnly() {
      #expect(
        JSONValue.parseObject(Array(#"{"a":[1,true,null,"x",{"b":2.5}]}"#.utf8)) == [
          "a": [1, true, .null, "x", ["b": 2.5]]
        ])
      for text in ["[]", "\"x\"", "1", "null", "{", ""] {
        #expect(JSONValue.parseObject(Array(text.utf8)) == nil, "\(text)")
      }
    }

    @Test func keepsNumbersAndBooleansApart() {
      #expect(
        JSONValue.parseObject(Array(#"{"t":true,"one":1,"big":1800000000.5}"#.utf8)) == [
          "t": .bool(true), "one": .number(1), "big": .number(1_800_000_000.5),
        ])
    }
  }
}
