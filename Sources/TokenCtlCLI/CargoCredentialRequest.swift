/// One request of cargo's credential provider protocol, version 1 (The Cargo Book,
/// "Credential Provider Protocol"): what cargo asks, for which registry. Only the fields
/// tokenctl reads; the others (`operation`, `args`, `headers`…) are ignored.
struct CargoCredentialRequest: Decodable {
  /// `v`: the protocol version, 1 (the only one the hello offers).
  var version: Int
  /// `kind`: `get`, `login` or `logout`.
  var kind: String
  var registry: Registry

  struct Registry: Decodable {
    /// `index-url`: the registry's index, such as `sparse+https://cargo.example.org/index/`.
    var indexURL: String
    /// `name`: the registry's name in cargo's configuration, when it has one.
    var name: String?

    enum CodingKeys: String, CodingKey {
      case indexURL = "index-url"
      case name
    }
  }

  enum CodingKeys: String, CodingKey {
    case version = "v"
    case kind, registry
  }

  /// The index's URL as a URL: without the `sparse+` or `registry+` cargo puts before
  /// the scheme to say how it reads the index.
  var indexURL: String {
    for prefix in ["sparse+", "registry+"] where registry.indexURL.hasPrefix(prefix) {
      return String(registry.indexURL.dropFirst(prefix.count))
    }
    return registry.indexURL
  }
}
