import AccountTypeFiles
import TokenKit

/// What `tokenctl doctor`'s checks look at, read once at its start and passed to each:
/// the account types with the user's files and settings, config.toml, and the group's
/// accounts as a listing (never a token).
struct DoctorInventory {
  var context: CLIContext
  var group: String
  /// Where config.toml is read from.
  var configurationPath: String
  /// config.toml's settings; nil when it could not be used (``configurationError``).
  var configuration: Configuration?
  /// Why config.toml could not be read or applied to the types.
  var configurationError: TokenKitError?
  /// The built-in types, the user's type files, and config.toml's settings when usable.
  var registry: AccountTypeRegistry
  /// The group's accounts; nil when the keyring could not be listed.
  var accounts: [Account]?
  /// The types the user's own files define.
  var userTypes: Set<String>

  /// Reads the type files and config.toml; lists the group's accounts when `listAccounts`
  /// (the keyring is reachable and unlocked: a listing would only repeat its failure).
  init(context: CLIContext, group: String, listAccounts: Bool) {
    self.context = context
    self.group = group
    configurationPath = Configuration.path(environment: context.environment)
    // A bad type file is the type files' check to report, with its fix, not a warning here.
    let withFiles = UserTypes.registry(adding: context.registry, environment: context.environment) { _ in }
    registry = withFiles
    userTypes = Set(withFiles.ids).subtracting(context.registry.ids)
    do {
      let configuration = try Configuration.load(path: configurationPath)
      registry = try withFiles.applying(configuration.types)
      self.configuration = configuration
    } catch let error as TokenKitError {
      configurationError = error
    } catch {
      configurationError = TokenKitError(.notConfigured, "\(configurationPath): \(error)")
    }
    if listAccounts {
      accounts = try? context.makeStore(group).list(.all).map(\.account)
    }
  }

  /// The types the user uses, in the registry's order: those with accounts in the group,
  /// those config.toml configures, and those of the user's own files.
  var typesInUse: [AccountTypeRegistry.Entry] {
    let withAccounts = Set((accounts ?? []).map(\.type))
    let configured = Set(configuration?.types.keys.map { $0 } ?? [])
    return registry.all.filter { entry in
      let id = entry.descriptor.id
      return withAccounts.contains(id) || configured.contains(id) || userTypes.contains(id)
    }
  }

  /// The group's accounts of type `id`.
  func accounts(ofType id: String) -> [Account] { (accounts ?? []).filter { $0.type == id } }
}
