import BitbucketAccount
import GitHubAccount
import GitLabAccount
import GiteaAccount
import GoogleAccount
import MicrosoftGraphAccount
import OpenIDConnectAccount
import TokenKit

/// The account types tokenctl is built with, registered as the command line's
/// `BuiltinPlugins` registers them, for settings to be applied to without the commands.
enum BuiltinTypes {
  static func registry() throws -> AccountTypeRegistry {
    var registry = AccountTypeRegistry()
    for plugin: any AccountTypePlugin.Type in [
      OpenIDConnectPlugin.self, MicrosoftGraphPlugin.self, GitHubPlugin.self, GitLabPlugin.self, GooglePlugin.self,
      BitbucketPlugin.self, GiteaPlugin.self,
    ] {
      try registry.register(plugin)
    }
    return registry
  }
}
