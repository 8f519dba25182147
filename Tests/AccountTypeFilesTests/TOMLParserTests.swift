import Foundation
import TOMLReader
import Testing

@Suite struct TOMLParserTests {
  /// A document and what it must parse to.
  struct Valid: Sendable, CustomTestStringConvertible {
    var name: String
    var document: String
    var expected: TOMLTable
    var testDescription: String { name }

    init(_ name: String, _ document: String, _ expected: TOMLTable) {
      self.name = name
      self.document = document
      self.expected = expected
    }
  }

  /// A document and what its error message must contain: the position and the
  /// expectation.
  struct Invalid: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var message: String
    var testDescription: String { name }

    init(_ name: String, _ document: String, _ message: String) {
      self.init(name, Array(document.utf8), message)
    }

    init(_ name: String, _ bytes: [UInt8], _ message: String) {
      self.name = name
      self.bytes = bytes
      self.message = message
    }
  }

  static let valid: [Valid] = [
    Valid("empty document", "", [:]),
    Valid("comments and blank lines", "# a comment\n\n   \t\n# another\n", [:]),
    Valid(
      "scalars", "s = \"x\"\ni = 42\nt = true\nf = false\n",
      ["s": "x", "i": 42, "t": true, "f": false]),
    Valid(
      "integers", "a = +1\nb = -17\nc = 1_000_000\nd = 0\ne = -0\nf = +0\ng = 5_3_1\n",
      ["a": 1, "b": -17, "c": 1_000_000, "d": 0, "e": 0, "f": 0, "g": 531]),
    Valid(
      "64-bit limits", "max = 9223372036854775807\nmin = -9223372036854775808",
      ["max": .integer(.max), "min": .integer(.min)]),
    Valid(
      "escapes", #"s = "q\" b\\ n\n t\t r\r b\b f\f e\u00E9 g\U0001F600""#,
      ["s": "q\" b\\ n\n t\t r\r b\u{08} f\u{0C} e\u{E9} g\u{1F600}"]),
    Valid("raw unicode", "s = \"日本語 é 🙂\"\n\"ключ\" = 'ü'", ["s": "日本語 é 🙂", "ключ": "ü"]),
    Valid("literal string", #"path = 'C:\Users\nodejs\templates' "#, ["path": #"C:\Users\nodejs\templates"#]),
    Valid("string with a hash", "s = \"a # b\" # c\n", ["s": "a # b"]),
    Valid("empty strings", "a = \"\"\nb = ''", ["a": "", "b": ""]),
    Valid(
      "multi-line basic string", "s = \"\"\"\nline one\nline \"two\"\n\"\"\"",
      ["s": "line one\nline \"two\"\n"]),
    Valid(
      "line-ending backslash", "s = \"\"\"\\\n    The quick \\\n\n    brown fox.\\\n    \"\"\"",
      ["s": "The quick brown fox."]),
    Valid("quotes before the closing delimiter", "s = \"\"\"\"one\"\"\"\"\"", ["s": "\"one\"\""]),
    Valid(
      "multi-line literal string", "s = '''\nraw \\n text\n  kept'''\nt = '''it's'''",
      ["s": "raw \\n text\n  kept", "t": "it's"]),
    Valid("tabs in strings", "s = \"a\tb\"\nt = 'c\td'", ["s": "a\tb", "t": "c\td"]),
    Valid("empty array", "a = []\nb = [ ]\nc = [\n]", ["a": [], "b": [], "c": []]),
    Valid(
      "arrays", "a = [1, 2, 3]\nb = [\"x\", 'y']\nc = [[1, 2], [\"a\"], []]\nd = [1, \"mixed\", true]",
      ["a": [1, 2, 3], "b": ["x", "y"], "c": [[1, 2], ["a"], []], "d": [1, "mixed", true]]),
    Valid(
      "multi-line array with comments and a trailing comma",
      "scopes = [ # first\n  \"openid\", # the basics\n\n  \"email\",\n  # done\n]\n",
      ["scopes": ["openid", "email"]]),
    Valid("empty inline table", "a = {}\nb = { }", ["a": [:], "b": [:]]),
    Valid("inline table", "t = { a = 1, b = \"x\" }", ["t": ["a": 1, "b": "x"]]),
    Valid(
      "nested inline tables", "t = { a = { b = { c = 1 } }, d = [{ e = true }] }",
      ["t": ["a": ["b": ["c": 1]], "d": [["e": true]]]]),
    Valid(
      "dotted keys in an inline table", "t = { a.b = 1, a.c = 2, \"d\".e = 3 }",
      ["t": ["a": ["b": 1, "c": 2], "d": ["e": 3]]]),
    Valid("tables", "[a]\nx = 1\n[b]\ny = 2\n", ["a": ["x": 1], "b": ["y": 2]]),
    Valid("dotted table header", "[types.corp]\nclient_id = \"x\"", ["types": ["corp": ["client_id": "x"]]]),
    Valid("sub-table then super-table", "[a.b]\nx = 1\n[a]\ny = 2", ["a": ["b": ["x": 1], "y": 2]]),
    Valid(
      "quoted keys and blanks in a header", "[ \"a b\" . 'c' .d ]\ne = 1", ["a b": ["c": ["d": ["e": 1]]]]),
    Valid("empty tables", "[a]\n[b.c]\n", ["a": [:], "b": ["c": [:]]]),
    Valid(
      "dotted keys", "a.b.c = 1\na.b.d = 2\na . e = 3", ["a": ["b": ["c": 1, "d": 2], "e": 3]]),
    Valid(
      "dotted keys into a table defined in the same section",
      "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n[fruit.apple.texture]\nsmooth = true",
      ["fruit": ["apple": ["color": "red", "taste": ["sweet": true], "texture": ["smooth": true]]]]),
    Valid(
      "dotted keys into a table a header only named", "[a.b.c]\nx = 1\n[a]\nb.y = 2",
      ["a": ["b": ["c": ["x": 1], "y": 2]]]),
    Valid("header into a dotted table", "a.b = 1\n[a.c]\nd = 2", ["a": ["b": 1, "c": ["d": 2]]]),
    Valid(
      "bare keys", "1234 = 'x'\n-_- = 1\nABC_def-9 = 2\n\"\" = 3",
      ["1234": "x", "-_-": 1, "ABC_def-9": 2, "": 3]),
    Valid("blanks around =", "a\t=\t1\n  b=2  \n", ["a": 1, "b": 2]),
    Valid("no final newline", "a = 1 # done", ["a": 1]),
    Valid(
      "CRLF line endings", "a = 1\r\n# c\r\n[t]\r\nk = [\r\n  1, # x\r\n]\r\ns = \"\"\"\r\nx\r\ny\"\"\"\r\n",
      ["a": 1, "t": ["k": [1], "s": "x\ny"]]),
    Valid("byte order mark", "\u{FEFF}a = 1\n", ["a": 1]),
    Valid(
      "32 nested arrays", "a = " + String(repeating: "[", count: 32) + String(repeating: "]", count: 32),
      ["a": (1..<32).reduce(TOMLValue.array([])) { inner, _ in .array([inner]) }]),
    Valid(
      "a 32-level header", "[" + Array(repeating: "t", count: 32).joined(separator: ".") + "]",
      (1..<32).reduce(["t": [:]] as TOMLTable) { inner, _ in ["t": .table(inner)] }),
  ]

  @Test(arguments: valid)
  func parses(_ test: Valid) throws {
    #expect(try TOMLParser.parse(test.document) == test.expected)
  }

  static let invalid: [Invalid] = [
    Invalid("duplicate key", "a = 1\nb = 2\na = 3", "input:3:1: duplicate key 'a'; first defined at 1:1"),
    Invalid("duplicate key in a table", "[t]\na = 1\na = 2", "input:3:1: duplicate key 't.a'"),
    Invalid("duplicate quoted key", "a = 1\n\"a\" = 2", "input:2:1: duplicate key 'a'"),
    Invalid("duplicate dotted key", "a.b = 1\na.b = 2", "input:2:3: duplicate key 'a.b'"),
    Invalid("table defined twice", "[a]\nx = 1\n[a]", "input:3:2: table [a] is defined twice; first at 1:2"),
    Invalid("sub-table defined twice", "[a.b]\n[a]\n[a.b]", "input:3:4: table [a.b] is defined twice"),
    Invalid(
      "value then table", "a = 1\n[a]", "input:2:2: key 'a' already has a value (at 1:1), so it cannot also be a table"),
    Invalid("value then dotted key", "a = 1\na.b = 2", "input:2:1: key 'a' already has a value"),
    Invalid("table then value", "[t]\na.b = 1\na = 2", "input:3:1: duplicate key 't.a'"),
    Invalid("header over an inline table", "a = {}\n[a]", "input:2:2: table 'a' was written inline at 1:1"),
    Invalid("header under an inline table", "a = { b = 1 }\n[a.c]", "input:2:2: table 'a' was written inline"),
    Invalid("dotted key into an inline table", "a = { b = 1 }\na.c = 2", "input:2:1: table 'a' was written inline"),
    Invalid(
      "dotted key into a header table", "[a.b]\nc = 1\n[a]\nb.d = 2",
      "input:4:1: table [a.b] is defined by a header at 1:4; add its keys under that header"),
    Invalid(
      "header over a dotted table", "a.b = 1\n[a]", "input:2:2: table [a] is already defined by dotted keys at 1:1"),
    Invalid(
      "header over a nested dotted table", "[fruit]\napple.color = \"red\"\n[fruit.apple]",
      "input:3:8: table [fruit.apple] is already defined by dotted keys"),
    Invalid("duplicate in an inline table", "t = { a = 1, a = 2 }", "input:1:14: duplicate key 't.a'"),
    Invalid("missing =", "client_id \"abc\"", "input:1:11: expected '=' after key 'client_id'"),
    Invalid("missing key", "= 1", "input:1:1: expected a key"),
    Invalid("missing value", "a =", "input:1:4: expected a value for key 'a'"),
    Invalid("missing value before a comment", "a = # x", "input:1:5: expected a value for key 'a'"),
    Invalid("unquoted string", "a = hello", "input:1:5: expected a value for key 'a': a quoted string"),
    Invalid("two values", "a = 1 2", "input:1:7: expected the end of the line after the value of key 'a'"),
    Invalid("text after a header", "[a] b", "input:1:5: expected the end of the line after the table header [a]"),
    Invalid("unclosed header", "[a\nb = 1", "input:1:3: expected ']' after table name 'a'"),
    Invalid("empty header", "[]", "input:1:2: expected a key"),
    Invalid("array of tables", "[[a]]", "input:1:1: arrays of tables ([[name]]) are not supported here"),
    Invalid("unterminated string", "a = \"abc", "input:1:5: expected '\"' to end the string on the line it starts"),
    Invalid("newline in a string", "a = \"ab\nc\"", "input:1:5: expected '\"' to end the string"),
    Invalid("unterminated literal", "a = 'abc\n", "input:1:5: expected \"'\" to end the literal string"),
    Invalid("unterminated multi-line", "a = \"\"\"abc\n\n", "input:1:5: expected \"\"\" to end the multi-line string"),
    Invalid("unterminated multi-line literal", "a = '''abc", "input:1:5: expected ''' to end the multi-line string"),
    Invalid("too many quotes", "a = \"\"\"x\"\"\"\"\"\"", "input:1:9: too many quotes"),
    Invalid("multi-line key", "\"\"\"a\"\"\" = 1", "input:1:1: a key cannot be a multi-line string"),
    Invalid("invalid escape", #"a = "x\qy""#, "input:1:7: invalid escape sequence; expected \\b"),
    Invalid("escape at the end", "a = \"x\\", "input:1:7: invalid escape sequence"),
    Invalid(
      "escape in a literal is kept, but then unterminated", "a = 'x\\'y'", "input:1:9: expected the end of the line"),
    Invalid("short \\u", #"a = "\u12""#, "input:1:6: expected 4 hexadecimal digits after \\u"),
    Invalid("short \\U", #"a = "\U0001F60""#, "input:1:6: expected 8 hexadecimal digits after \\U"),
    Invalid("surrogate escape", #"a = "\uD800""#, "input:1:6: escape is not a Unicode scalar value"),
    Invalid("escape above U+10FFFF", #"a = "\U00110000""#, "input:1:6: escape is not a Unicode scalar value"),
    Invalid("backslash then blanks, no newline", "a = \"\"\"x\\  y\"\"\"", "input:1:9: invalid escape sequence"),
    Invalid("control character in a string", "a = \"x\u{01}\"", "input:1:7: control character U+0001 in a string"),
    Invalid("DEL in a literal string", "a = 'x\u{7F}'", "input:1:7: control character U+007F in a literal string"),
    Invalid("control character in a comment", "# x\u{1B}[31m\n", "input:1:4: control character U+001B in a comment"),
    Invalid("float", "a = 1.5", "input:1:5: floating-point numbers are not supported here"),
    Invalid("exponent", "a = 1e6", "input:1:5: floating-point numbers are not supported here"),
    Invalid("inf", "a = -inf", "input:1:5: floating-point numbers are not supported here"),
    Invalid("nan", "a = nan", "input:1:5: floating-point numbers are not supported here"),
    Invalid("date", "a = 1979-05-27", "input:1:5: dates and times are not supported here"),
    Invalid("date-time", "a = 1979-05-27T07:32:00Z", "input:1:5: dates and times are not supported here"),
    Invalid("local time", "a = 07:32:00", "input:1:5: dates and times are not supported here"),
    Invalid("hexadecimal", "a = 0xFF", "input:1:5: hexadecimal, octal and binary integers are not supported here"),
    Invalid("binary", "a = 0b101", "input:1:5: hexadecimal, octal and binary integers are not supported here"),
    Invalid("leading zero", "a = 012", "input:1:5: leading zeros are not allowed"),
    Invalid("double underscore", "a = 1__2", "input:1:5: an underscore in an integer must sit between two digits"),
    Invalid("leading underscore", "a = _1", "input:1:5: expected a value for key 'a'"),
    Invalid("trailing underscore", "a = 1_", "input:1:5: expected a value for key 'a'"),
    Invalid("sign only", "a = +", "input:1:5: expected a value for key 'a'"),
    Invalid("overflow", "a = 9223372036854775808", "input:1:5: integer out of range"),
    Invalid("negative overflow", "a = -9223372036854775809", "input:1:5: integer out of range"),
    Invalid("unterminated array", "a = [1, 2\n", "input:1:5: expected ']' to close the array of key 'a'"),
    Invalid("missing comma", "a = [1 2]", "input:1:8: expected ',' or ']' after an element of the array of key 'a'"),
    Invalid("leading comma", "a = [,1]", "input:1:6: expected a value for key 'a'"),
    Invalid("two commas", "a = [1,,2]", "input:1:8: expected a value for key 'a'"),
    Invalid(
      "inline table over lines", "a = { b = 1,\n c = 2 }",
      "input:1:13: expected a key; an inline table must be on one line"),
    Invalid(
      "inline table unclosed on its line", "a = { b = 1\n}",
      "input:1:12: expected '}' to close the inline table of key 'a'"),
    Invalid("inline trailing comma", "a = { b = 1, }", "input:1:14: expected a key; a trailing comma is not allowed"),
    Invalid(
      "inline missing comma", "a = { b = 1 c = 2 }", "input:1:13: expected ',' or '}' in the inline table of key 'a'"),
    Invalid("lone carriage return", "a = 1\rb = 2", "input:1:6: a carriage return must be followed by a line feed"),
    Invalid(
      "lone carriage return in a comment", "# x\ry", "input:1:4: a carriage return must be followed by a line feed"),
    Invalid("NUL", [UInt8]("a = 1\n".utf8) + [0], "input:2:1: a NUL byte is not allowed"),
    Invalid("NUL in a string", [UInt8]("a = \"x".utf8) + [0, 0x22], "input:1:7: a NUL byte is not allowed"),
    Invalid("invalid UTF-8", [UInt8]("a = \"".utf8) + [0xFF, 0x22], "input:1:6: invalid UTF-8"),
    Invalid("overlong UTF-8", [UInt8]("a = \"".utf8) + [0xC0, 0x80, 0x22], "input:1:6: invalid UTF-8"),
    Invalid("UTF-8 surrogate", [UInt8]("# ".utf8) + [0xED, 0xA0, 0x80], "input:1:3: invalid UTF-8"),
    Invalid("truncated UTF-8", [UInt8]("a = 1 # ".utf8) + [0xE2, 0x82], "input:1:9: invalid UTF-8"),
    Invalid("UTF-8 above U+10FFFF", [0xF4, 0x90, 0x80, 0x80], "input:1:1: invalid UTF-8"),
    Invalid(
      "33 nested arrays", "a = " + String(repeating: "[", count: 33) + String(repeating: "]", count: 33),
      "input:1:37: arrays and tables are nested deeper than 32 levels"),
    Invalid(
      "33 nested inline tables",
      "a = " + String(repeating: "{ b = ", count: 33) + "1" + String(repeating: " }", count: 33),
      "arrays and tables are nested deeper than 32 levels"),
    Invalid(
      "a 33-level header", "[" + Array(repeating: "t", count: 33).joined(separator: ".") + "]",
      "input:1:1: tables are nested deeper than 32 levels"),
    Invalid(
      "a 34-part dotted key", Array(repeating: "t", count: 34).joined(separator: ".") + " = 1",
      "input:1:1: tables are nested deeper than 32 levels"),
    Invalid(
      "dotted keys deepening a deep header",
      "[" + Array(repeating: "t", count: 30).joined(separator: ".") + "]\na.b.c = 1\nd.e.f.g = 1",
      "input:3:1: tables are nested deeper than 32 levels"),
    Invalid(
      "an array below a 32-level header", "[" + Array(repeating: "t", count: 32).joined(separator: ".") + "]\na = []",
      "input:2:5: arrays and tables are nested deeper than 32 levels"),
    Invalid("positions count scalars, not bytes", "a = \"é🙂\" b", "input:1:10: expected the end of the line"),
    Invalid("a BOM takes no column", "\u{FEFF}a = 1 x", "input:1:7: expected the end of the line"),
    Invalid("CRLF lines count once", "a = 1\r\nb = 1\r\na = 2", "input:3:1: duplicate key 'a'; first defined at 1:1"),
    Invalid("a BOM in the middle", "a = 1\n\u{FEFF}b = 2", "input:2:1: expected a key"),
  ]

  @Test(arguments: invalid)
  func refuses(_ test: Invalid) {
    let error = #expect(throws: TOMLError.self) { try TOMLParser.parse(test.bytes) }
    #expect(error?.message.contains(test.message) == true, "\(error?.message ?? "no error")")
  }

  @Test func aDocumentOverOneMebibyteIsRefused() {
    let line = Array("# padding padding padding padding padding padding padding padding\n".utf8)
    var bytes: [UInt8] = []
    while bytes.count <= TOMLParser.maximumSize { bytes += line }
    let error = #expect(throws: TOMLError.self) { try TOMLParser.parse(bytes, source: "big.toml") }
    #expect(error?.message.hasPrefix("big.toml:1:1: the file is larger than 1 MiB") == true)
    // Exactly at the limit is fine.
    #expect(throws: Never.self) { try TOMLParser.parse(Array(bytes.prefix(TOMLParser.maximumSize - 1)) + [0x0A]) }
  }

  @Test func errorsNameTheSource() {
    let error = #expect(throws: TOMLError.self) {
      try TOMLParser.parse("\n\nclient_id \"x\"", source: "/home/ada/.config/tokenctl/config.toml")
    }
    #expect(error?.message == "/home/ada/.config/tokenctl/config.toml:3:11: expected '=' after key 'client_id'")
  }

  /// Errors name keys, never values: a value may be a secret, and errors reach terminals
  /// and logs.
  @Test(arguments: [
    "client_secret = hunter2hunter2",
    "client_secret = \"hunter2hunter2\" hunter2hunter2",
    "client_secret = \"hunter2hunter2",
    "client_secret = \"hunter2hunter2\\q\"",
    "client_secret = 'hunter2hunter2\u{01}'",
    "client_secret = [\"hunter2hunter2\" \"hunter2hunter2\"]",
    "client_secret = { a = \"hunter2hunter2\" \"hunter2hunter2\" }",
    "# hunter2hunter2 \u{01}",
    "[t]\nclient_secret = 'hunter2hunter2'\nclient_secret = 'hunter2hunter2'",
  ])
  func errorsNeverQuoteValues(_ document: String) {
    let error = #expect(throws: TOMLError.self) { try TOMLParser.parse(document) }
    #expect(error?.description.contains("hunter2") == false, "\(error?.description ?? "")")
  }

  @Test func keysShownInErrorsCannotControlTheTerminal() {
    let error = #expect(throws: TOMLError.self) { try TOMLParser.parse(#""\u001B[2J\u202E" = 1 1"#) }
    #expect(error?.message.contains("\u{1B}") == false)
    #expect(error?.message.contains("\u{202E}") == false)
    #expect(error?.message.contains(#"'"\u001B[2J\u202E"'"#) == true, "\(error?.message ?? "")")
  }

  @Test func entriesRecordWhereTheyWereWritten() throws {
    let table = try TOMLParser.parse("# config\n[types.corp]\nclient_id = \"x\"\n  scopes = [\n  \"a\"]\n")
    let types = try #require(table["types"]?.table)
    #expect(table.entry("types")?.keyPosition == TOMLPosition(line: 2, column: 2))
    #expect(types.entry("corp")?.keyPosition == TOMLPosition(line: 2, column: 8))
    let corp = try #require(types["corp"]?.table)
    #expect(corp.keys == ["client_id", "scopes"])
    #expect(corp.entry("client_id")?.keyPosition == TOMLPosition(line: 3, column: 1))
    #expect(corp.entry("client_id")?.valuePosition == TOMLPosition(line: 3, column: 13))
    #expect(corp.entry("scopes")?.keyPosition == TOMLPosition(line: 4, column: 3))
    #expect(corp.entry("scopes")?.valuePosition == TOMLPosition(line: 4, column: 12))
  }

  @Test func keysKeepTheirOrder() throws {
    let table = try TOMLParser.parse("z = 1\na = 2\n[m]\n[b]")
    #expect(table.keys == ["z", "a", "m", "b"])
  }

  @Test func theDescriptionRedactsSecrets() throws {
    let table = try TOMLParser.parse(
      "client_id = \"id\"\nclient_secret = \"s3cr3t\"\nrefresh_token = \"t0k3n\"\nPassword = \"p4ss\"\nn = [1, true]")
    #expect(
      table.description
        == "{ client_id = \"id\", client_secret = <redacted>, refresh_token = <redacted>, Password = <redacted>, n = [1, true] }"
    )
  }

  @Test func equalityIgnoresOrderAndPositions() throws {
    let parsed = try TOMLParser.parse("b = 2\n\n\na = 1")
    #expect(parsed == ["a": 1, "b": 2])
    #expect(parsed.hashValue == (["a": 1, "b": 2] as TOMLTable).hashValue)
    #expect(parsed != ["a": 1, "b": 3])
    #expect(parsed != ["a": 1])
  }

  // MARK: - Robustness

  /// SplitMix64: a seeded generator, so a failure reproduces.
  struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  static let sample = Array(
    """
    \u{FEFF}# tokenctl
    hook = "notify-send \\"$TOKENCTL_EVENT\\" \\u00E9"
    [types.corp]
    client_id = 'abc-123'
    scopes = [ "openid", # c
      'email', ]
    redirect_port = 8_400
    inline = { a.b = 1, c = [true, false], d = { e = \"\"\"x\"\"\" } }
    [types."quoted key".deeper]
    text = '''
    multi
    line'''
    neg = -42\r
    end = true
    """.utf8)

  /// Any result is fine; a crash, a hang or an error without its place is not.
  static func parseAnything(_ bytes: [UInt8]) {
    do {
      _ = try TOMLParser.parse(bytes)
    } catch {
      #expect(error.message.hasPrefix("input:"), "\(error.message)")
    }
  }

  @Test func theSampleParses() throws {
    let table = try TOMLParser.parse(Self.sample)
    let corp = table["types"]?.table?["corp"]?.table
    #expect(corp?["redirect_port"] == 8400)
    #expect(corp?["inline"] == ["a": ["b": 1], "c": [true, false], "d": ["e": "x"]])
    #expect(table["types"]?.table?["quoted key"]?.table?["deeper"]?.table?["neg"] == -42)
  }

  @Test func randomBytesNeverCrash() {
    var random = SeededGenerator(state: 0x70_6b_65_6e)
    // Bytes TOML cares about, so that random input gets past the first few characters.
    let alphabet = Array("[]{}=,.\"'\\#\n\r\t _-+0123456789abcefnrtuxU:".utf8) + [0x00, 0x7F, 0xC3, 0xA9, 0xFF]
    for _ in 0..<3000 {
      let count = Int.random(in: 0..<120, using: &random)
      let biased = Bool.random(using: &random)
      let bytes = (0..<count).map { _ in
        biased ? alphabet.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
      }
      Self.parseAnything(bytes)
    }
  }

  @Test func mutationsOfAValidDocumentNeverCrash() {
    var random = SeededGenerator(state: 0x74_6f_6d_6c)
    let interesting = Array("[]{}=,.\"'\\#\n\r \u{00}".utf8) + [0x80, 0xFF]
    for _ in 0..<3000 {
      var bytes = Self.sample
      for _ in 0..<Int.random(in: 1...4, using: &random) {
        let position = Int.random(in: 0...bytes.count, using: &random)
        let byte =
          Bool.random(using: &random)
          ? interesting.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
        switch Int.random(in: 0..<4, using: &random) {
        case 0 where position < bytes.count: bytes[position] = byte
        case 1 where position < bytes.count: bytes.remove(at: position)
        case 2:
          // Duplicating a slice makes duplicate keys, tables and deep nesting likely.
          let end = min(bytes.count, position + Int.random(in: 1...40, using: &random))
          bytes.insert(contentsOf: bytes[position..<end], at: position)
        default: bytes.insert(byte, at: position)
        }
      }
      Self.parseAnything(bytes)
    }
  }

  /// Inputs that make a naive parser quadratic or overflow its stack, each near 1 MiB.
  /// They must finish quickly; a quadratic parser would take minutes. Timed in this
  /// thread's CPU time, not the wall clock's: other programs on a busy machine stretch
  /// the one and not the other (a loaded CI took 12.5 s of wall time for one input).
  @Test(arguments: [
    "a = [" + String(repeating: "1,", count: 400_000) + "]",
    "a = {" + String(repeating: "b = 1, ", count: 1) + (0..<80_000).map { "k\($0) = 1" }.joined(separator: ", ") + "}",
    (0..<60_000).map { "k\($0).x = \"v\"" }.joined(separator: "\n"),
    (0..<40_000).map { "[t\($0 % 100).u\($0)]\nk = 1" }.joined(separator: "\n"),
    "a = \"\"\"" + String(repeating: "\"\"x", count: 300_000) + "\"\"\"",
    String(repeating: "[", count: 1_000_000),
    "a = " + String(repeating: "[", count: 900_000),
    "a = " + String(repeating: "{ b = ", count: 150_000),
    String(repeating: "a.", count: 500_000) + "a = 1",
    String(repeating: "#\n", count: 500_000) + "a = 1\na = 2",
    "a = 1 " + String(repeating: "é", count: 500_000),
  ])
  func pathologicalInputsAreFast(_ document: String) {
    let bytes = Array(document.utf8)
    let started = Self.threadCPUTime()
    Self.parseAnything(bytes)
    #expect(Self.threadCPUTime() - started < .seconds(10))
  }

  /// The CPU time this thread has used (a synchronous test runs on one thread throughout).
  static func threadCPUTime() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
  }
}
