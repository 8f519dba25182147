/// A D-Bus message as tokenctl's calls send and read them: a method call out, a method
/// return or an error back (the specification's "Message Format"). Public for the fuzzer
/// (Tests/Fuzz, target `dbus`): what the bus sends is read by it.
public struct DBusMessage: Equatable, Sendable {
  public enum Kind: UInt8, Sendable {
    case methodCall = 1
    case methodReturn = 2
    case error = 3
    case signal = 4
  }

  /// The header fields this client reads or writes, by their codes.
  private enum Field: UInt8 {
    case path = 1
    case interface = 2
    case member = 3
    case errorName = 4
    case replySerial = 5
    case destination = 6
    case signature = 8
  }

  /// The largest message D-Bus allows (2^27 bytes): a peer that says more is broken.
  static let maximumLength = 1 << 27

  public let kind: Kind?
  public let serial: UInt32
  /// The serial of the call this message answers (a return or an error).
  public let replySerial: UInt32?
  /// An error's name (`org.freedesktop.DBus.Error.NotSupported`).
  public let errorName: String?
  /// The body's values, read by the message's signature.
  public let body: [DBusValue]

  /// A method call, marshalled: `body` writes the arguments `signature` describes.
  static func call(
    serial: UInt32, destination: String, path: String, interface: String, member: String,
    signature: String = "", body: (inout DBusWriter) -> Void = { _ in }
  ) -> [UInt8] {
    var arguments = DBusWriter()
    body(&arguments)
    var header = DBusWriter()
    header.byte(UInt8(ascii: "l"))
    header.byte(Kind.methodCall.rawValue)
    header.byte(0)  // No flags: a reply is wanted, and the name must not start a service.
    header.byte(1)  // Protocol version.
    header.uint32(UInt32(arguments.bytes.count))
    header.uint32(serial)
    header.array(elementAlignment: 8) { fields in
      func field(_ code: Field, _ type: String, _ value: String) {
        fields.structure {
          $0.byte(code.rawValue)
          $0.signature(type)
          if type == "g" { $0.signature(value) } else { $0.string(value) }
        }
      }
      field(.path, "o", path)
      field(.interface, "s", interface)
      field(.member, "s", member)
      field(.destination, "s", destination)
      if !signature.isEmpty { field(.signature, "g", signature) }
    }
    header.align(8)
    return header.bytes + arguments.bytes
  }

  /// The length of the message that `bytes` begins with, once its fixed header is there
  /// (16 bytes); nil before. Throws when it is not a little-endian message of a size
  /// D-Bus allows.
  public static func length(of bytes: ArraySlice<UInt8>) throws(DBusReader.Failure) -> Int? {
    guard bytes.count >= 16 else { return nil }
    let start = bytes.startIndex
    // Every peer on a little-endian machine sends little-endian messages; another order is
    // refused here and read by GDBus instead.
    guard bytes[start] == UInt8(ascii: "l") else { throw .badSignature }
    func uint32(_ at: Int) -> Int {
      (0..<4).reversed().reduce(0) { $0 << 8 | Int(bytes[start + at + $1]) }
    }
    let fieldsEnd = 16 + uint32(12)
    let total = (fieldsEnd + 7) / 8 * 8 + uint32(4)
    guard uint32(12) <= maximumLength, uint32(4) <= maximumLength, total <= maximumLength else { throw .truncated }
    return total
  }

  /// Reads one whole message (see ``length(of:)``).
  public init(_ bytes: [UInt8]) throws(DBusReader.Failure) {
    var reader = DBusReader(bytes, offset: 12)
    guard bytes.count >= 16, let fields = try reader.values("a(yv)").first?.elements else { throw .truncated }
    kind = Kind(rawValue: bytes[1])
    serial = (0..<4).reversed().reduce(0) { $0 << 8 | UInt32(bytes[8 + $1]) }
    var replySerial: UInt32?
    var errorName: String?
    var signature = ""
    for field in fields {
      guard let pair = field.fields, pair.count == 2, case .integer(let code) = pair[0] else { throw .truncated }
      switch (Field(rawValue: UInt8(truncatingIfNeeded: code)), pair[1].unwrapped) {
      case (.replySerial, .integer(let value)): replySerial = UInt32(truncatingIfNeeded: value)
      case (.errorName, .string(let name)): errorName = name
      case (.signature, .string(let types)): signature = types
      default: break
      }
    }
    self.replySerial = replySerial
    self.errorName = errorName
    reader.offset = (reader.offset + 7) / 8 * 8
    body = try reader.values(signature)
    guard reader.offset == bytes.count else { throw .truncated }
  }
}
