#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One request of cargo's credential provider protocol, version 1 (The Cargo Book,
/// "Credential Provider Protocol"): what cargo asks, for which registry. Only the fields
/// tokenctl reads; the others (`operation`, `args`, `headers`…) are ignored.
public struct CargoCredentialRequest: Decodable, Sendable, ToolCredentialProtocol {
  public static let requestKind = "cargo-get"

  /// `v`: the protocol version, 1 (the only one the hello offers).
  public var version: Int
  /// `kind`: `get`, `login` or `logout`.
  public var kind: String
  public var registry: Registry

  public struct Registry: Decodable, Sendable {
    /// `index-url`: the registry's index, such as `sparse+https://cargo.example.org/index/`.
    public var indexURL: String
    /// `name`: the registry's name in cargo's configuration, when it has one.
    public var name: String?

    enum CodingKeys: String, CodingKey {
      case indexURL = "index-url"
      case name
    }
  }

  enum CodingKeys: String, CodingKey {
    case version = "v"
    case kind, registry
  }

  /// The request on `line`, nil when it is none of version 1.
  public static func decode(_ line: [UInt8]) -> CargoCredentialRequest? {
    guard let request = try? JSONDecoder().decode(Self.self, from: Data(line)), request.version == 1 else {
      return nil
    }
    return request
  }

  /// The index's URL as a URL: without the `sparse+` or `registry+` cargo puts before
  /// the scheme to say how it reads the index.
  public var indexURL: String {
    for prefix in ["sparse+", "registry+"] where registry.indexURL.hasPrefix(prefix) {
      return String(registry.indexURL.dropFirst(prefix.count))
    }
    return registry.indexURL
  }

  /// `input`: one request line; only a `get` of version 1, whose registry no type serves is
  /// `url-not-supported`. `login`, `logout` and the rest are the command line's to word.
  public static func question(_ field: (String) -> String?) -> ToolQuestion? {
    guard let line = field("input"), let cargo = decode(Array(line.utf8)), cargo.kind == "get",
      let message = CredentialMessage(requestFor: cargo.indexURL)
    else { return nil }
    return ToolQuestion(message) { answer in
      (answer.map { CargoCredentialResponse.token($0) } ?? .urlNotSupported).line
    }
  }

  /// What the agent leaves to the client is a `login` or `logout`: the local machine's.
  public static let directMeansNone = false
}
