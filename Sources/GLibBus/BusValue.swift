import CLibSecret

/// A value of a D-Bus message: a method's arguments or reply, or a signal's body, as
/// Swift values, so that no caller of the bus juggles `GVariant` pointers.
///
/// Built into a `GVariant` only on the bus's side (``variant()``), and read from one
/// (``init(reading:)``) with the types tokenctl's peers send.
public enum BusValue: Sendable {
  case string(String)
  /// `o`
  case objectPath(String)
  case boolean(Bool)
  case int64(Int64)
  case uint32(UInt32)
  case int32(Int32)
  case byte(UInt8)
  /// `v`: a value that carries its type.
  indirect case variant(BusValue)
  /// `a{sv}`
  case dictionary([(String, BusValue)])
  /// `a{ss}`: the Secret Service's attributes, say.
  case stringDictionary([(String, String)])
  /// `aa{sv}`: a list of dictionaries.
  case dictionaries([[(String, BusValue)]])
  /// `as`
  case strings([String])
  /// `ao`
  case objectPaths([String])
  /// A tuple: the body of a call, a reply or a signal.
  case tuple([BusValue])

  /// A new floating `GVariant`: whoever it is passed to takes it.
  public func variant() -> OpaquePointer {
    switch self {
    case .string(let text): return tokenctl_g_variant_new_string(text)
    case .objectPath(let path): return tokenctl_g_variant_new_object_path(path)
    case .boolean(let value): return tokenctl_g_variant_new_boolean(value ? 1 : 0)
    case .int64(let value): return tokenctl_g_variant_new_int64(Int(value))
    case .uint32(let value): return tokenctl_g_variant_new_uint32(value)
    case .int32(let value): return tokenctl_g_variant_new_int32(value)
    case .byte(let value): return tokenctl_g_variant_new_byte(value)
    case .variant(let value): return tokenctl_g_variant_new_variant(value.variant())
    case .strings(let texts): return Self.array(of: "s", texts.map { tokenctl_g_variant_new_string($0) })
    case .objectPaths(let paths): return Self.array(of: "o", paths.map { tokenctl_g_variant_new_object_path($0) })
    case .dictionary(let entries): return Self.dictionary(entries)
    case .dictionaries(let list): return Self.array(of: "a{sv}", list.map(Self.dictionary))
    case .stringDictionary(let entries):
      return Self.array(
        of: "{ss}",
        entries.map {
          tokenctl_g_variant_new_dict_entry(tokenctl_g_variant_new_string($0), tokenctl_g_variant_new_string($1))
        })
    case .tuple(let values):
      let children: [OpaquePointer?] = values.map { $0.variant() }
      return children.withUnsafeBufferPointer { tokenctl_g_variant_new_tuple($0.baseAddress, $0.count) }
    }
  }

  /// What `variant` holds, which stays the caller's. A dictionary with string or object
  /// path keys (but `a{ss}`) reads as ``dictionary(_:)``, its `v` values unwrapped; a value of a type
  /// none of tokenctl's peers sends it (integers other than `u`, other arrays) reads as
  /// an empty tuple, which matches nothing a caller looks for.
  ///
  /// `depth` is how many levels of containers are read: a container below them reads as an
  /// empty tuple, its values untouched. A caller that needs only the outside of a large
  /// value (the names of a collection's changed properties, not the paths of its thousand
  /// items) pays for no more.
  public init(reading variant: OpaquePointer, depth: Int = .max) {
    let type = String(cString: tokenctl_g_variant_get_type_string(variant))
    // Containers' type strings begin with one of these (arrays, tuples, entries, variants).
    if depth <= 0, let first = type.first, "a({v".contains(first) {
      self = .tuple([])
      return
    }
    func children(of container: OpaquePointer) -> [BusValue] { Self.children(of: container, depth: depth - 1) }
    switch type {
    case "s", "o":
      let text = String(cString: tokenctl_g_variant_get_string(variant, nil))
      self = type == "s" ? .string(text) : .objectPath(text)
    case "b": self = .boolean(tokenctl_g_variant_get_boolean(variant) != 0)
    case "u": self = .uint32(tokenctl_g_variant_get_uint32(variant))
    case "v": self = .variant(children(of: variant)[0])
    case "as", "ao":
      let texts = children(of: variant).map { child -> String in
        switch child {
        case .string(let text), .objectPath(let text): text
        default: ""
        }
      }
      self = type == "as" ? .strings(texts) : .objectPaths(texts)
    case "a{ss}":
      self = .stringDictionary(
        (0..<tokenctl_g_variant_n_children(variant)).map { index in
          let entry = tokenctl_g_variant_get_child_value(variant, index)!
          defer { tokenctl_g_variant_unref(entry) }
          return (Variant.string(entry, 0), Variant.string(entry, 1))
        })
    case "aa{sv}":
      self = .dictionaries(
        children(of: variant).map { if case .dictionary(let entries) = $0 { entries } else { [] } })
    case _ where type.hasPrefix("a{s") || type.hasPrefix("a{o"):
      self = .dictionary(
        children(of: variant).compactMap { entry in
          guard case .tuple(let pair) = entry, pair.count == 2 else { return nil }
          switch pair[0] {
          case .string(let key), .objectPath(let key): return (key, pair[1].unwrapped)
          default: return nil
          }
        })
    case _ where type.hasPrefix("(") || type.hasPrefix("{"): self = .tuple(children(of: variant))
    default: self = .tuple([])
    }
  }

  /// The value a variant (`v`) carries; any other value itself.
  public var unwrapped: BusValue {
    if case .variant(let value) = self { return value }
    return self
  }

  /// The values of a container: a tuple's, an array's, a variant's one.
  private static func children(of container: OpaquePointer, depth: Int = .max) -> [BusValue] {
    (0..<tokenctl_g_variant_n_children(container)).map { index in
      let child = tokenctl_g_variant_get_child_value(container, index)!
      defer { tokenctl_g_variant_unref(child) }
      return BusValue(reading: child, depth: depth)
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
