#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Kubernetes' `ExecCredential` (client.authentication.k8s.io, v1 and v1beta1): what
/// kubectl gives an exec credential plugin in `KUBERNETES_EXEC_INFO`, and the answer it
/// reads back on standard output.
struct ExecCredential: Codable {
  static let kind = "ExecCredential"
  /// The version kubectl asks with (the kubeconfig's `exec.apiVersion`); answered alike.
  static let versions = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]

  var apiVersion: String
  var kind = Self.kind
  var spec: Spec?
  var status: Status?

  struct Spec: Codable {
    /// Present when the kubeconfig's exec section says `provideClusterInfo: true`.
    var cluster: Cluster?
    var interactive: Bool?
  }

  struct Cluster: Codable {
    /// The API server's URL, as the kubeconfig names it.
    var server: String?
  }

  struct Status: Codable {
    var token: String
    /// RFC 3339; kubectl runs the plugin again once it has passed.
    var expirationTimestamp: String?
  }

  /// The request in `KUBERNETES_EXEC_INFO`, nil when it is missing or no ExecCredential.
  static func request(_ text: String?) -> ExecCredential? {
    guard let text, let request = try? JSONDecoder().decode(Self.self, from: Data(text.utf8)),
      request.kind == kind
    else { return nil }
    return request
  }
}
