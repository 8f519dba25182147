#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Kubernetes' `ExecCredential` (client.authentication.k8s.io, v1 and v1beta1): what
/// kubectl gives an exec credential plugin in `KUBERNETES_EXEC_INFO`, and the answer it
/// reads back on standard output. In one place for the command line's direct path and the
/// agent, which writes the answer for the front end to print as it came.
public struct ExecCredential: Codable, Sendable, ToolCredentialProtocol {
  public static let requestKind = "kube-get"

  public static let kind = "ExecCredential"
  /// The version kubectl asks with (the kubeconfig's `exec.apiVersion`); answered alike.
  public static let versions = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]
  /// The variable kubectl passes the request in.
  public static let variable = "KUBERNETES_EXEC_INFO"

  public var apiVersion: String
  public var kind = Self.kind
  public var spec: Spec?
  public var status: Status?

  public init(apiVersion: String, spec: Spec? = nil, status: Status? = nil) {
    self.apiVersion = apiVersion
    self.spec = spec
    self.status = status
  }

  public struct Spec: Codable, Sendable {
    /// Present when the kubeconfig's exec section says `provideClusterInfo: true`.
    public var cluster: Cluster?
    public var interactive: Bool?
  }

  public struct Cluster: Codable, Sendable {
    /// The API server's URL, as the kubeconfig names it.
    public var server: String?
  }

  public struct Status: Codable, Sendable {
    public var token: String
    /// RFC 3339; kubectl runs the plugin again once it has passed.
    public var expirationTimestamp: String?

    public init(token: String, expirationTimestamp: String?) {
      self.token = token
      self.expirationTimestamp = expirationTimestamp
    }
  }

  /// The API server a request is for: `option` (the plugin's `--server`), else the one
  /// kubectl names in `request` (the exec section's `provideClusterInfo: true`).
  public static func server(option: String?, request: ExecCredential?) -> String? {
    option ?? request?.spec?.cluster?.server
  }

  /// The answer's JSON line from git's answer for the server (nil: no password, no
  /// account serves it), in the version `request` asked with.
  public static func answer(_ message: CredentialMessage?, request: ExecCredential?) -> String? {
    guard let message, let token = message["password"] else { return nil }
    let version = request.map(\.apiVersion).flatMap { versions.contains($0) ? $0 : nil }
    let expiry = message["password_expiry_utc"].flatMap(Double.init).map {
      Date(timeIntervalSince1970: $0).formatted(.iso8601)
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Strings only: encoding cannot fail.
    let data = try! encoder.encode(
      ExecCredential(
        apiVersion: version ?? versions[0], status: .init(token: token, expirationTimestamp: expiry)))
    return String(decoding: data, as: UTF8.self) + "\n"
  }

  /// The request in `KUBERNETES_EXEC_INFO`, nil when it is missing or no ExecCredential.
  public static func request(_ text: String?) -> ExecCredential? {
    guard let text, let request = try? JSONDecoder().decode(Self.self, from: Data(text.utf8)),
      request.kind == kind
    else { return nil }
    return request
  }

  /// `server`, the plugin's `--server`, else the one in `exec-info`, what kubectl passed in
  /// ``variable``; answered in the version that asked.
  public static func question(_ field: (String) -> String?) -> ToolQuestion? {
    let info = request(field("exec-info"))
    guard let server = server(option: field("server"), request: info),
      let message = CredentialMessage(requestFor: server)
    else { return nil }
    return ToolQuestion(message) { answer($0, request: info) }
  }

  /// `tokenctl kube-credential`, a Kubernetes exec credential plugin.
  public static let commandLine: ToolCommandLine? = ToolCommandLine(
    name: "kube-credential",
    abstract: "Answer kubectl's exec credential requests with fresh tokens.",
    discussion: """
      A Kubernetes exec credential plugin (client.authentication.k8s.io/v1 or v1beta1). \
      Prints an ExecCredential with the token and its expirationTimestamp, so that kubectl \
      runs it again only once the token has expired, for the account that serves the API \
      server, chosen as for git (tokenctl-types(5), [credentials.accounts] in tokenctl-config(5), \
      TOKENCTL_ACCOUNT, which the exec section's env may set). The server is the one \
      kubectl names in KUBERNETES_EXEC_INFO when the exec section says \
      provideClusterInfo: true, else --server. In a kubeconfig's user:

        exec:
          apiVersion: client.authentication.k8s.io/v1
          command: tokenctl
          args: [kube-credential]
          provideClusterInfo: true
          interactiveMode: Never
      """,
    serverHelp: "The API server's URL, when kubectl does not give it (provideClusterInfo).",
    environment: [variable: "exec-info"],
    server: { field in server(option: field("server"), request: request(field("exec-info"))) },
    noServer: "kubectl named no API server",
    noServerRecovery: "Add 'provideClusterInfo: true' to the exec section of the kubeconfig's user, "
      + "or pass --server URL in its args.",
    serverURL: "an API server URL")
}
