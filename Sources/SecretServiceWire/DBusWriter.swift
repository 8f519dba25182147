/// Values in D-Bus's wire format, little endian, as the specification's "Marshaling (Wire
/// Format)" lays them out: each value aligned to its size from the start of what is being
/// marshalled. A message's body starts on an 8-byte boundary, so a body marshalled on its
/// own aligns as it will in the message.
///
/// Only what tokenctl's calls send: bytes, byte arrays, 32-bit integers, strings, object
/// paths, signatures, arrays, string dictionaries, structures and variants.
struct DBusWriter {
  private(set) var bytes: [UInt8] = []

  /// Pads with zeros to a multiple of `boundary`.
  mutating func align(_ boundary: Int) {
    while bytes.count % boundary != 0 { bytes.append(0) }
  }

  mutating func byte(_ value: UInt8) { bytes.append(value) }

  mutating func uint32(_ value: UInt32) {
    align(4)
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  /// `s` and `o`: a 32-bit length, the UTF-8 bytes and a NUL.
  mutating func string(_ text: String) {
    let utf8 = Array(text.utf8)
    uint32(UInt32(utf8.count))
    bytes.append(contentsOf: utf8)
    bytes.append(0)
  }

  /// `g`: an 8-bit length, the bytes and a NUL.
  mutating func signature(_ text: String) {
    let utf8 = Array(text.utf8)
    bytes.append(UInt8(utf8.count))
    bytes.append(contentsOf: utf8)
    bytes.append(0)
  }

  /// `a…`: a 32-bit length in bytes, the padding to the elements' alignment (not
  /// counted), then the elements `body` writes.
  mutating func array(elementAlignment: Int, _ body: (inout DBusWriter) -> Void) {
    uint32(0)
    let lengthAt = bytes.count - 4
    align(elementAlignment)
    let start = bytes.count
    body(&self)
    let length = UInt32(bytes.count - start).littleEndian
    withUnsafeBytes(of: length) { for (index, byte) in $0.enumerated() { bytes[lengthAt + index] = byte } }
  }

  /// `ay`: a 32-bit length and the bytes as they are (a secret).
  mutating func byteArray(_ values: [UInt8]) {
    uint32(UInt32(values.count))
    bytes.append(contentsOf: values)
  }

  /// `a{ss}`, its entries in the order of their keys, so that one dictionary is always
  /// written the same.
  mutating func stringDictionary(_ dictionary: [String: String]) {
    array(elementAlignment: 8) { entries in
      for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
        entries.structure {
          $0.string(key)
          $0.string(value)
        }
      }
    }
  }

  /// `(…)` and `{…}`: aligned to 8, then the fields.
  mutating func structure(_ body: (inout DBusWriter) -> Void) {
    align(8)
    body(&self)
  }

  /// `v`: the signature of the single complete type `type`, then the value `body` writes,
  /// which must be of that type.
  mutating func variant(_ type: String, _ body: (inout DBusWriter) -> Void) {
    signature(type)
    body(&self)
  }

  /// `v` holding a string.
  mutating func variant(string text: String) {
    variant("s") { $0.string(text) }
  }
}
