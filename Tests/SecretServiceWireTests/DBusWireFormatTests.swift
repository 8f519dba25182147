import Testing

@testable import SecretServiceWire

#if canImport(Glibc)
  import Glibc
#endif

/// The wire format as the D-Bus specification lays it out ("Marshaling (Wire Format)",
/// "Message Format"): what this client writes reads back, bytes that a bus would send read
/// as it means them, and a malformed message is refused, never read past its end.
@Suite struct DBusWireFormatTests {
  /// A call's header and body, read back: its serial, kind and every argument.
  @Test func aCallReadsBackAsWritten() throws {
    let bytes = DBusMessage.call(
      serial: 7, destination: "org.freedesktop.secrets", path: "/org/freedesktop/secrets",
      interface: "org.freedesktop.Secret.Service", member: "GetSecrets", signature: "aoo"
    ) { body in
      body.array(elementAlignment: 4) { array in
        array.string("/org/freedesktop/secrets/collection/login/1")
        array.string("/org/freedesktop/secrets/collection/login/22")
      }
      body.string("/org/freedesktop/secrets/session/3")
    }
    #expect(try DBusMessage.length(of: bytes[...]) == bytes.count)
    let message = try DBusMessage(bytes)
    #expect(message.kind == .methodCall)
    #expect(message.serial == 7)
    #expect(
      message.body == [
        .array([
          .string("/org/freedesktop/secrets/collection/login/1"),
          .string("/org/freedesktop/secrets/collection/login/22"),
        ]),
        .string("/org/freedesktop/secrets/session/3"),
      ])
  }

  /// `SearchItems`' argument, `a{ss}`: each entry aligned to 8 after the length, which does
  /// not count the padding before the first.
  @Test func aDictionaryIsAlignedAsTheSpecificationSays() throws {
    var writer = DBusWriter()
    writer.array(elementAlignment: 8) { entries in
      entries.structure {
        $0.string("a")
        $0.string("b")
      }
    }
    // length 4 bytes, padding to 8, "a": 4 + 2, pad to 12, "b": 4 + 2 = 18 bytes of elements.
    #expect(writer.bytes.count == 8 + 14)
    #expect(Array(writer.bytes[0..<4]) == [14, 0, 0, 0])
    var reader = DBusReader(writer.bytes)
    #expect(try reader.values("a{ss}") == [.array([.structure([.string("a"), .string("b")])])])
  }

  /// A reply as gnome-keyring sends `GetSecrets`' (`a{o(oayays)}`) and a `GetAll` (`a{sv}`
  /// holding `a{ss}` and `t`), built byte by byte as the specification lays them out.
  @Test func repliesOfTheSecretServiceRead() throws {
    var writer = DBusWriter()
    writer.array(elementAlignment: 8) { entries in
      entries.structure {
        $0.string("/item/1")
        $0.structure {
          $0.string("/session/1")
          $0.array(elementAlignment: 1) { _ in }
          $0.array(elementAlignment: 1) { bytes in for byte in Array("{\"v\":1}".utf8) { bytes.byte(byte) } }
          $0.string("text/plain")
        }
      }
    }
    writer.array(elementAlignment: 8) { entries in
      entries.structure {
        $0.string("Attributes")
        $0.signature("a{ss}")
        $0.array(elementAlignment: 8) { pairs in
          pairs.structure {
            $0.string("type")
            $0.string("graph")
          }
        }
      }
      entries.structure {
        $0.string("Modified")
        $0.signature("t")
        $0.align(8)
        $0.uint32(1_700_000_000)
        $0.uint32(0)
      }
    }
    var reader = DBusReader(writer.bytes)
    let values = try reader.values("a{o(oayays)}a{sv}")
    #expect(reader.offset == writer.bytes.count)
    #expect(
      values[0].entry("/item/1")
        == .structure([.string("/session/1"), .bytes([]), .bytes(Array("{\"v\":1}".utf8)), .string("text/plain")]))
    var attributes: [String: DBusValue] = [:]
    #expect(values[1].entry("Attributes")?.unwrapped.forEachEntry { attributes[$0] = $1 } == true)
    #expect(attributes == ["type": .string("graph")])
    #expect(values[1].entry("Modified")?.unwrapped == .integer(1_700_000_000))
    #expect(!values[1].entry("Modified")!.forEachEntry { _, _ in })
  }

  /// A write's arguments: `SetSecret`'s secret, `(oayays)`, and a `Properties.Set` of
  /// `a{ss}` in its variant, each entry in the order of its key.
  @Test func theArgumentsOfAWriteReadBackAsWritten() throws {
    var writer = DBusWriter()
    writer.structure {
      $0.string("/session/1")
      $0.byteArray([])
      $0.byteArray(Array("{\"v\":1}".utf8))
      $0.string("text/plain")
    }
    writer.string("org.freedesktop.Secret.Item")
    writer.variant("a{ss}") { $0.stringDictionary(["type": "graph", "expires": ""]) }
    var reader = DBusReader(writer.bytes)
    let values = try reader.values("(oayays)sv")
    #expect(reader.offset == writer.bytes.count)
    #expect(
      values == [
        .structure([.string("/session/1"), .bytes([]), .bytes(Array("{\"v\":1}".utf8)), .string("text/plain")]),
        .string("org.freedesktop.Secret.Item"),
        .variant(
          .array([.structure([.string("expires"), .string("")]), .structure([.string("type"), .string("graph")])])),
      ])
  }

  /// Every prefix of a message is refused as truncated, never read past its end.
  @Test func aTruncatedMessageIsRefused() throws {
    let bytes = DBusMessage.call(
      serial: 1, destination: "d", path: "/p", interface: "i", member: "m", signature: "s"
    ) { $0.string("hello") }
    for end in 16..<bytes.count {
      #expect(throws: DBusReader.Failure.self) { try DBusMessage(Array(bytes[..<end])) }
    }
    var reader = DBusReader([200, 0, 0, 0, 1])
    #expect(throws: DBusReader.Failure.truncated) { try reader.values("s") }
  }

  @Test(arguments: ["(", "a", "{s}", "{sss}", "z", "()", String(repeating: "a", count: 70) + "y"])
  func aSignatureThatIsNoTypeIsRefused(_ signature: String) {
    var reader = DBusReader([UInt8](repeating: 0, count: 64))
    #expect(throws: DBusReader.Failure.badSignature) { try reader.values(signature) }
  }

  /// A variant nested beyond what D-Bus allows is refused, not followed until the stack ends.
  @Test func deeplyNestedVariantsAreRefused() {
    var writer = DBusWriter()
    for _ in 0..<100 { writer.signature("v") }
    writer.signature("y")
    writer.byte(1)
    var reader = DBusReader(writer.bytes)
    #expect(throws: DBusReader.Failure.badSignature) { try reader.values("v") }
  }

  @Test func aBigEndianOrOversizedMessageIsRefused() throws {
    var big = [UInt8](repeating: 0, count: 16)
    big[0] = UInt8(ascii: "B")
    #expect(throws: DBusReader.Failure.self) { try DBusMessage.length(of: big[...]) }
    var huge = [UInt8](repeating: 0, count: 16)
    huge[0] = UInt8(ascii: "l")
    huge[7] = 0x7f
    #expect(throws: DBusReader.Failure.self) { try DBusMessage.length(of: huge[...]) }
    #expect(try DBusMessage.length(of: huge[..<15]) == nil)
  }

  @Test(
    arguments: [
      ("unix:path=/run/user/1000/bus", nil, DBusAddress.path("/run/user/1000/bus")),
      ("unix:abstract=/tmp/dbus-AbC,guid=0123", nil, .abstract("/tmp/dbus-AbC")),
      ("unix:guid=1,path=/tmp/with%20space", nil, .path("/tmp/with space")),
      ("tcp:host=h,port=1;unix:path=/second", nil, .path("/second")),
      (nil, "/run/user/7", .path("/run/user/7/bus")),
    ] as [(String?, String?, DBusAddress?)])
  func theSessionBusAddressIsRead(address: String?, runtime: String?, expected: DBusAddress?) {
    #expect(DBusAddress(address, runtimeDirectory: runtime) == expected)
  }

  @Test(
    arguments: [("tcp:host=h,port=1", "/run/user/7"), ("unix:path=/x%zz", nil), ("launchd:env=X", nil), (nil, nil)]
      as [(String?, String?)])
  func aBusThisClientCannotReachIsLeftToGDBus(address: String?, runtime: String?) {
    #expect(DBusAddress(address, runtimeDirectory: runtime) == nil)
  }
}

/// A bus that takes the connection and never answers: the read gives up at its timeout
/// with `noAnswer`, which the store reports as the Secret Service not answering, rather
/// than handing it to GDBus to wait as long again.
@Suite struct DBusWireTimeoutTests {
  @Test func aBusThatNeverAnswersIsNoAnswerAtTheTimeout() throws {
    let directory = "/tmp/tokenctl-wire-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    #expect(mkdir(directory, 0o700) == 0)
    defer { rmdir(directory) }
    let path = directory + "/bus"
    let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    #expect(listener >= 0)
    defer {
      close(listener)
      unlink(path)
    }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    #expect(bound == 0 && listen(listener, 4) == 0)
    // Nobody accepts: the connection waits in the backlog, and the write fits its buffer.
    let started = ContinuousClock.now
    let outcome = SecretServiceWireRead.items(
      matching: ["group": "default"], properties: { _ in true }, secrets: true, algorithm: "plain",
      busAddress: "unix:path=" + path, runtimeDirectory: nil, timeoutMilliseconds: 300)
    #expect(outcome == .noAnswer)
    #expect(ContinuousClock.now - started < .seconds(5))
  }
}
