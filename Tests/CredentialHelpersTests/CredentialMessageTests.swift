import CredentialHelpers
import Testing

@Suite struct CredentialMessageTests {
  static func parse(_ text: String) throws(CredentialMessageError) -> CredentialMessage {
    try CredentialMessage.parse(Array(text.utf8))
  }

  @Test func readsAttributesInOrderUpToTheBlankLine() throws {
    let message = try Self.parse(
      "protocol=https\nhost=example.org\npath=a/b.git\nusername=ada\nx-future=1=2\n\nhost=evil.example\n")
    #expect(message["protocol"] == "https")
    #expect(message["host"] == "example.org")
    #expect(message["path"] == "a/b.git")
    #expect(message["username"] == "ada")
    #expect(message["x-future"] == "1=2", "only the first '=' separates")
    #expect(message.attributes.map(\.key) == ["protocol", "host", "path", "username", "x-future"])
  }

  @Test(
    arguments: [
      ("protocol=https\nhost=a\n", 2),
      ("protocol=https\nhost=a", 2),
      ("", 0),
      ("\nprotocol=https\n", 0),
      ("host=\n", 1),
    ])
  func endsAtABlankLineOrTheEnd(text: String, count: Int) throws {
    #expect(try Self.parse(text).attributes.count == count)
  }

  @Test func readsArraysInOrderAndAnEmptyElementClearsThem() throws {
    let message = try Self.parse(
      "capability[]=authtype\nwwwauth[]=Basic realm=x\ncapability[]=state\nwwwauth[]=\nwwwauth[]=Bearer\n")
    #expect(message.values("capability") == ["authtype", "state"])
    #expect(message.values("wwwauth") == ["Bearer"])
    #expect(message.values("missing") == [])
  }

  /// `url` is read as the attributes it stands for, replacing those before it and not
  /// those after, as git reads it; one that is no URL is refused.
  @Test func aURLIsReadAsItsParts() throws {
    let message = try Self.parse("host=old\nusername=ada\nurl=http://127.0.0.1:8080/simple/\ncapability[]=authtype\n")
    #expect(message["protocol"] == "http")
    #expect(message["host"] == "127.0.0.1:8080")
    #expect(message["path"] == "simple/")
    #expect(message["username"] == nil)
    #expect(message.values("capability") == ["authtype"])
    #expect(try Self.parse("url=pypi.example.org\n")["protocol"] == "https")
    #expect(try Self.parse("url=https://pypi.example.org\npath=x\n")["path"] == "x")
    #expect(throws: CredentialMessageError.invalidURL()) {
      try Self.parse("url=https://ada:secret@pypi.example.org/\n")
    }
  }

  /// A URL whose host tools read otherwise than tokenctl is refused, saying why, so that
  /// the helper answers nothing and the tool sends no token.
  @Test func aURLWhoseHostToolsReadOtherwiseIsRefusedWithTheReason() throws {
    let nested = #expect(throws: CredentialMessageError.ambiguousURL(.nestedURL)) {
      try Self.parse("protocol=http\nurl=http://trusted.example/@@http://evil.example/repo\nusername=oauth2\n")
    }
    #expect(nested?.line == 2)
    #expect(nested?.description.contains("line 2: a 'url' with '://' after its scheme") == true)
    let backslash = #expect(throws: CredentialMessageError.ambiguousURL(.backslash)) {
      try Self.parse("url=http://evil.example\\@trusted.example/simple/\n")
    }
    #expect(backslash?.description.contains("a backslash") == true)
    #expect(backslash?.description.contains("no token is given for it") == true)
  }

  @Test func theLastOfARepeatedKeyWins() throws {
    #expect(try Self.parse("host=a\nhost=b\n")["host"] == "b")
  }

  @Test(
    arguments: [
      ("host=a\0b\n", CredentialMessageError.nulByte()),
      ("host=a\r\n", .carriageReturn()),
      ("host=a\rprotocol=https\n", .carriageReturn()),
      ("protocol=https\nhost\n", .missingEquals()),
      ("=value\n", .emptyKey()),
    ])
  func refusesInputGitNeverSends(text: String, expected: CredentialMessageError) {
    #expect(throws: expected) { try Self.parse(text) }
  }

  @Test func refusesInvalidUTF8AndOverlongInput() {
    let long = "host=" + String(repeating: "a", count: CredentialMessage.maximumLineLength) + "\n"
    #expect(throws: CredentialMessageError.lineTooLong()) { try Self.parse(long) }
    #expect(throws: CredentialMessageError.invalidUTF8()) {
      try CredentialMessage.parse(Array("host=".utf8) + [0xff, 0xfe, 10])
    }
    let line = Array(("x=" + String(repeating: "a", count: 60_000) + "\n").utf8)
    let flood = Array(repeating: line, count: 20).flatMap { $0 }
    #expect(throws: CredentialMessageError.inputTooLong) { try CredentialMessage.parse(flood) }
  }

  @Test func errorsNameTheirLine() {
    do {
      _ = try Self.parse("protocol=https\nhost=a\0\n")
      Issue.record("no error")
    } catch {
      #expect(error.line == 2)
      #expect(error.description.contains("line 2"))
    }
  }

  @Test(
    arguments: [
      ("host=a\n", "protocol"),
      ("protocol=https\n", "host"),
      ("protocol=https\nhost=\n", "host"),
    ])
  func lookupsNeedProtocolAndHost(text: String, missing: String) throws {
    let message = try Self.parse(text)
    #expect(throws: CredentialMessageError.missingAttribute(missing)) { try message.requireProtocolAndHost() }
  }

  @Test func serializesInOrderAndRoundTrips() throws {
    var message = CredentialMessage()
    message["username"] = "oauth2"
    message["password"] = "secret"
    message.append("capability", "authtype")
    message["password_expiry_utc"] = "1700000000"
    let text = try message.serialized()
    #expect(text == "username=oauth2\npassword=secret\ncapability[]=authtype\npassword_expiry_utc=1700000000\n")
    #expect(try Self.parse(text) == message)
  }

  @Test(arguments: ["a\nhost=evil", "a\0", "a\r"])
  func refusesToSerializeAValueThatWouldInjectALine(value: String) {
    var message = CredentialMessage()
    message["password"] = value
    #expect(throws: CredentialMessageError.unsafeValue()) { try message.serialized() }
  }

  /// A fuzz pass in miniature: random bytes from git's alphabet and worse never crash the
  /// parser, and whatever parses serializes and parses back to itself.
  @Test func randomInputNeverCrashes() throws {
    var generator = SplitMix64(seed: 5)
    let alphabet: [UInt8] = Array("ab=[]\n\r\0".utf8) + [0xc3, 0xa9, 0xff]
    for _ in 0..<5000 {
      let length = Int.random(in: 0..<40, using: &generator)
      let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
      guard let message = try? CredentialMessage.parse(bytes) else { continue }
      #expect(try CredentialMessage.parse(Array(message.serialized().utf8)) == message)
    }
  }
}

/// A seeded generator, so a failing input can be replayed.
struct SplitMix64: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
