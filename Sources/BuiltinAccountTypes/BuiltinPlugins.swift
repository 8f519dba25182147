import BitbucketAccount
import CredentialHelpers
import GitHubAccount
import GitLabAccount
import GiteaAccount
import GoogleAccount
import MicrosoftGraphAccount
import OpenIDConnectAccount
import TokenKit

/// The account-type plugins compiled into this tokenctl: the full program and the agent
/// register the same.
public enum BuiltinPlugins {
  public static var all: [any AccountTypePlugin.Type] {
    [
      OpenIDConnectPlugin.self,
      MicrosoftGraphPlugin.self,
      GitHubPlugin.self,
      GitLabPlugin.self,
      GooglePlugin.self,
      BitbucketPlugin.self,
      GiteaPlugin.self,
    ]
  }

  /// The tools' credential protocols (CredentialHelpers) whose `get` the agent answers:
  /// what the front end and the fast path ask for each is `ClientCommand`'s, and a tool whose
  /// helper is a plain one (its `commandLine`) has its command among `tokenctl`'s
  /// subcommands from this list, in its order.
  public static let credentialProtocols: [any ToolCredentialProtocol.Type] = [
    GitCredentials.self, DockerCredentials.self, ExecCredential.self, CargoCredentialRequest.self,
  ]

  /// A registry holding every built-in type.
  public static func registry() throws -> AccountTypeRegistry {
    var registry = AccountTypeRegistry()
    for plugin in all { try registry.register(plugin) }
    return registry
  }
}
