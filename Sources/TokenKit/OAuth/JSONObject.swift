#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A JSON object from an authorization server, read leniently where servers differ in
/// harmless ways (a number sent as a string) and strictly where it matters (the top level
/// must be an object).
///
/// A view of the members ``JSONValue`` reads, the one JSON reader of the core: the
/// leniency is in the accessors, not in a second parser.
struct JSONObject: Sendable {
  private let fields: [String: JSONValue]

  /// Decodes `body`; `what` names the document in the error.
  init(_ body: [UInt8], what: String) throws(AuthorizationServiceError) {
    guard !body.isEmpty else { throw .malformedResponse("the \(what) is empty") }
    guard let members = try? JSONDecoder().decode([String: Member].self, from: Data(body)) else {
      throw .malformedResponse("the \(what) is not a JSON object")
    }
    fields = members.mapValues { $0.value ?? .null }
  }

  /// A member whose value JSON allows but a double cannot hold (`1e10000`) counts as
  /// present but unusable, as a value of the wrong type does, rather than failing the
  /// whole response.
  private struct Member: Decodable {
    let value: JSONValue?
    init(from decoder: any Decoder) throws { value = try? JSONValue(from: decoder) }
  }

  func string(_ name: String) -> String? { fields[name]?.stringValue }

  /// Every member whose value is a string, a whole number, or an array of those (as their
  /// texts joined by spaces), but those named in `excluded`: what a provider's extension
  /// members of an error (a `suberror`, an array of error numbers) look like.
  func strings(excluding excluded: Set<String>) -> [String: String] {
    func text(_ value: JSONValue) -> String? {
      switch value {
      case .string(let text): return text
      case .number(let number) where number == number.rounded() && abs(number) < 1e15: return String(Int64(number))
      default: return nil
      }
    }
    var result: [String: String] = [:]
    for (name, value) in fields where !excluded.contains(name) {
      if case .array(let items) = value {
        let texts = items.compactMap(text)
        if texts.count == items.count, !texts.isEmpty { result[name] = texts.joined(separator: " ") }
      } else if let text = text(value) {
        result[name] = text
      }
    }
    return result
  }

  /// A number, also when sent as a numeric string (`"expires_in": "3599"`).
  func number(_ name: String) -> Double? {
    switch fields[name] {
    case .number(let value): return value
    case .string(let text): return Double(text)
    default: return nil
    }
  }

  /// A duration in seconds (`expires_in`, `interval`): a number as above, if finite and
  /// within ``maximumSeconds`` either way; anything else counts as absent. No server means
  /// a NaN or a lifetime of millennia, and such values would trap the arithmetic done with
  /// them (whole seconds in the store, the countdown of a device sign-in).
  func seconds(_ name: String) -> Double? {
    guard let value = number(name), value.isFinite, abs(value) <= Self.maximumSeconds else { return nil }
    return value
  }

  /// About 317 years: above any real lifetime, including the 68 years of `Int32.max` that
  /// some servers send to mean "never", and far below where whole seconds overflow.
  static let maximumSeconds: Double = 1e10

  func strings(_ name: String) -> [String]? {
    switch fields[name] {
    case .array(let values):
      // Only an array of strings is a list of them.
      let strings = values.compactMap(\.stringValue)
      return strings.count == values.count ? strings : nil
    case .string(let value): return value.split(separator: " ").map(String.init)
    default: return nil
    }
  }

  func bool(_ name: String) -> Bool? {
    if case .bool(let value) = fields[name] { return value }
    return nil
  }

  func has(_ name: String) -> Bool { fields[name] != nil }
}
