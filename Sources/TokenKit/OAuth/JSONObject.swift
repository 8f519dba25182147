#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A JSON object from an authorization server, read leniently where servers differ in
/// harmless ways (a number sent as a string) and strictly where it matters (the top level
/// must be an object).
struct JSONObject: Sendable {
  private let fields: [String: Value]

  enum Value: Decodable, Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case strings([String])
    case other

    init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      if let string = try? container.decode(String.self) {
        self = .string(string)
      } else if let number = try? container.decode(Double.self) {
        self = .number(number)
      } else if let bool = try? container.decode(Bool.self) {
        self = .bool(bool)
      } else if let strings = try? container.decode([String].self) {
        self = .strings(strings)
      } else {
        self = .other
      }
    }
  }

  /// Decodes `body`; `what` names the document in the error.
  init(_ body: [UInt8], what: String) throws(AuthorizationServiceError) {
    guard !body.isEmpty else { throw .malformedResponse("the \(what) is empty") }
    do {
      fields = try JSONDecoder().decode([String: Value].self, from: Data(body))
    } catch {
      throw .malformedResponse("the \(what) is not a JSON object")
    }
  }

  func string(_ name: String) -> String? {
    if case .string(let value) = fields[name] { return value }
    return nil
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
    case .strings(let value): return value
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
