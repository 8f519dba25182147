import Foundation
import TestSupport
import Testing
import TokenKit

/// `tokenctl kube-credential` as a real kubectl's exec credential plugin, against an API
/// server stand-in over TLS (`Tests/Support/kube-api-server.py`; kubectl runs exec plugins
/// for no plain http server) that checks every bearer token at the real authorization
/// server.
@Suite(.serialized) struct KubeCredentialTests {
  static let kubectlPath = "/usr/bin/kubectl"
  static let hasKubectl = FileManager.default.isExecutableFile(atPath: kubectlPath)

  let fixture: ToolHelperFixture

  init() async throws {
    fixture = try await ToolHelperFixture.started(registry: "Tests/Support/kube-api-server.py")
  }

  var kubeconfig: String { fixture.directory.path("kubeconfig") }

  /// A kubeconfig whose user runs tokenctl with the cluster's address, as the plugin's help
  /// says to write it.
  func writeKubeconfig(apiVersion: String = "client.authentication.k8s.io/v1") throws {
    try """
    apiVersion: v1
    kind: Config
    clusters:
    - name: test
      cluster:
        server: \(fixture.registry)
        certificate-authority: \(fixture.registryState.path)/cert.pem
    users:
    - name: ada
      user:
        exec:
          apiVersion: \(apiVersion)
          command: \(TestProcess.tokenctl)
          args: [kube-credential]
          provideClusterInfo: true
          interactiveMode: Never
    contexts:
    - name: test
      context: {cluster: test, user: ada}
    current-context: test
    """.write(toFile: kubeconfig, atomically: true, encoding: .utf8)
  }

  func kubectl(_ arguments: [String]) async throws -> ProcessResult {
    var environment = fixture.environment
    environment["KUBECONFIG"] = kubeconfig
    environment["KUBECACHEDIR"] = fixture.directory.path("kube-cache")
    return try await TestProcess.run(Self.kubectlPath, arguments, environment: environment)
  }

  @Test(.enabled(if: hasKubectl, "kubectl is not installed"))
  func kubectlListsNamespacesWithTheAccountsToken() async throws {
    defer { fixture.cleanUp() }
    let account = try await fixture.signIn(user: "ada")
    try writeKubeconfig()
    let get = try await kubectl(["get", "namespaces", "-o", "name"])
    #expect(get.status == 0, "\(get.stderr)\n\(fixture.requests())")
    #expect(get.stdout == "namespace/default\n")
    let token = try fixture.token(account)
    #expect(try await fixture.server.introspect(token).active)
    #expect(fixture.tokensSent() == [fixture.fingerprint(token)], "kubectl sent the account's token and no other")
    #expect(!get.stderr.contains(token))
  }

  @Test func thePluginAnswersAnExecCredentialWithTheExpiry() async throws {
    defer { fixture.cleanUp() }
    let account = try await fixture.signIn(user: "ada")
    try fixture.expire(account)
    let old = try fixture.token(account)
    for version in ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"] {
      var environment = fixture.environment
      environment["KUBERNETES_EXEC_INFO"] =
        #"{"kind":"ExecCredential","apiVersion":"\#(version)","spec":{"cluster":{"server":"\#(fixture.registry)"},"interactive":false}}"#
      let result = try await TestProcess.run(TestProcess.tokenctl, ["kube-credential"], environment: environment)
      #expect(result.status == 0, "\(result.stderr)")
      let answer = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
      let status = try #require(answer["status"] as? [String: String])
      let token = try fixture.token(account)
      #expect(token != old, "the expired token was refreshed first")
      #expect(answer["apiVersion"] as? String == version)
      #expect(answer["kind"] as? String == "ExecCredential")
      #expect(status["token"] == token)
      let expiry = try #require(status["expirationTimestamp"].flatMap { try? Date($0, strategy: .iso8601) })
      #expect(expiry > Date().addingTimeInterval(60))
    }
  }

  /// The front end, installed as `tokenctl`, answers the plugin from the agent alone
  /// (`make bench`, row 17): with no full program beside it to hand over to, it prints
  /// the same bytes as the full program, for the cluster kubectl names and for --server.
  @Test func theFrontEndAloneAnswersThroughTheAgent() async throws {
    defer { fixture.cleanUp() }
    _ = try await fixture.signIn(user: "ada")
    let socket = fixture.directory.path("agent/agent.sock")
    let agent = try await TestAgent.start(
      environment: fixture.environment, socket: socket, log: fixture.directory.path("agent.log"))
    var client = TestAgent.clientEnvironment(fixture.environment, socket: socket)
    client["KUBERNETES_EXEC_INFO"] =
      #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"cluster":{"server":"\#(fixture.registry)"},"interactive":false}}"#
    let (alone, folder) = try ToolHelperFixture.frontEndAlone(named: "tokenctl")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    for arguments in [["kube-credential"], ["kube-credential", "--server", fixture.registry]] {
      let full = try await TestProcess.run(TestProcess.tokenctl, arguments, environment: client)
      #expect(full.status == 0, "\(full.stderr)")
      let before = try await agent.requests()
      let answer = try await TestProcess.run(alone, arguments, environment: client)
      #expect(answer.status == 0, "\(answer.stderr)")
      #expect(answer.stdout == full.stdout && answer.stderr.isEmpty)
      #expect(answer.stdout.contains(#""kind":"ExecCredential""#) && answer.stdout.contains(#""token":""#))
      // Its request and the status request that reads the counter.
      #expect(try await agent.requests() == before + 2)
    }
    #expect(await agent.stop() == 0)
  }

  @Test func withoutTheClusterOrAnAccountItSaysWhatToDo() async throws {
    let bare = try await TestProcess.run(TestProcess.tokenctl, ["kube-credential"], environment: fixture.environment)
    #expect(bare.status != 0)
    #expect(bare.stdout.isEmpty)
    #expect(bare.stderr.contains("provideClusterInfo: true"), "\(bare.stderr)")
    let none = try await TestProcess.run(
      TestProcess.tokenctl, ["kube-credential", "--server", fixture.registry], environment: fixture.environment)
    #expect(none.status != 0)
    #expect(none.stdout.isEmpty)
    #expect(none.stderr.contains("run 'tokenctl login gitlocal'"), "\(none.stderr)")
    // A cluster no type serves: kubectl has no other plugin to ask, so it is said.
    let unserved = try await TestProcess.run(
      TestProcess.tokenctl, ["kube-credential", "--server", "https://cluster.invalid:6443"],
      environment: fixture.environment)
    #expect(unserved.status != 0)
    #expect(unserved.stdout.isEmpty)
    #expect(unserved.stderr.contains("no account type serves cluster.invalid"), "\(unserved.stderr)")
  }
}
