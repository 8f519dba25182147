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
  /// each tool's command is among `tokenctl`'s subcommands, and what the front end and the
  /// fast path ask for it is `ClientCommand`'s.
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
