import CLibSecret

/// A value of a D-Bus reply or signal, built into a `GVariant` only on the bus's side, so
/// that the agent's code never juggles GLib's pointers.
public enum BusValue: Sendable {
  case string(String)
  case boolean(Bool)
  case int64(Int64)
  case uint32(UInt32)
  case int32(Int32)
  case byte(UInt8)
  /// `a{sv}`
  case dictionary([(String, BusValue)])
  /// `aa{sv}`: a list of dictionaries.
  case dictionaries([[(String, BusValue)]])
  /// `as`
  case strings([String])
  /// A tuple: the body of a reply or a signal.
  case tuple([BusValue])

  /// A new floating `GVariant`: whoever it is passed to takes it.
  func variant() -> OpaquePointer {
    switch self {
    case .string(let text): return tokenctl_g_variant_new_string(text)
    case .boolean(let value): return tokenctl_g_variant_new_boolean(value ? 1 : 0)
    case .int64(let value): return tokenctl_g_variant_new_int64(Int(value))
    case .uint32(let value): return tokenctl_g_variant_new_uint32(value)
    case .int32(let value): return tokenctl_g_variant_new_int32(value)
    case .byte(let value): return tokenctl_g_variant_new_byte(value)
    case .strings(let texts): return Self.array(of: "s", texts.map { tokenctl_g_variant_new_string($0) })
    case .dictionary(let entries): return Self.dictionary(entries)
    case .dictionaries(let list): return Self.array(of: "a{sv}", list.map(Self.dictionary))
    case .tuple(let values):
      let children: [OpaquePointer?] = values.map { $0.variant() }
      return children.withUnsafeBufferPointer { tokenctl_g_variant_new_tuple($0.baseAddress, $0.count) }
    }
  }

  private static func dictionary(_ entries: [(String, BusValue)]) -> OpaquePointer {
    array(
      of: "{sv}",
      entries.map { key, value in
        tokenctl_g_variant_new_dict_entry(
          tokenctl_g_variant_new_string(key), tokenctl_g_variant_new_variant(value.variant()))
      })
  }

  private static func array(of type: String, _ children: [OpaquePointer?]) -> OpaquePointer {
    type.withCString { type in
      children.withUnsafeBufferPointer {
        tokenctl_g_variant_new_array(OpaquePointer(type), $0.baseAddress, $0.count)
      }
    }
  }
}
