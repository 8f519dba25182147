/// The account types tokenctl knows, each with where it came from.
///
/// Plugins register their descriptors here; later, user-defined descriptor files do too.
/// Registering an id twice is an error that names both sources, so a user can see which
/// file or plugin to fix.
public struct AccountTypeRegistry: Sendable {
  /// A registered descriptor and its origin.
  public struct Entry: Sendable, Hashable {
    public var descriptor: EndpointDescriptor
    /// Where it came from: `plugin Corp`, or a file path.
    public var source: String
  }

  var entries: [String: Entry] = [:]
  /// Plugin behaviour by type id; kept apart from the entries, which are plain values.
  var behaviors: [String: any AccountTypeBehavior] = [:]
  /// The settings a plugin defines for its types, and how it applies them.
  var pluginOptions:
    [String: (keys: [String], configure: @Sendable (EndpointDescriptor, [String: String]) throws -> EndpointDescriptor)] =
      [:]

  public init() {}

  /// Adds `descriptor`, found in `source`.
  public mutating func register(_ descriptor: EndpointDescriptor, source: String) throws {
    try Self.check(descriptor, from: source)
    if let existing = entries[descriptor.id] {
      throw TokenKitError(
        .duplicateAccountType,
        "account type '\(descriptor.id)' is defined twice: by \(existing.source) and by \(source)",
        recovery: "Rename or remove one of them.")
    }
    entries[descriptor.id] = Entry(descriptor: descriptor, source: source)
  }

  /// Adds every descriptor a plugin provides.
  public mutating func register(_ plugin: any AccountTypePlugin.Type) throws {
    for descriptor in plugin.descriptors {
      try register(descriptor, source: "plugin \(plugin.name)")
    }
    for (id, behavior) in plugin.behaviors where entries[id] != nil { behaviors[id] = behavior }
    for (id, keys) in plugin.optionKeys where entries[id] != nil {
      pluginOptions[id] = (keys, { try plugin.configure($0, options: $1) })
    }
  }

  /// Puts `descriptor` in the place of the type registered under its id, or adds it, with
  /// `source` as its origin: for settings that change a registered type. Checked as
  /// ``register(_:source:)`` checks, but a type already there is no duplicate.
  public mutating func replace(_ descriptor: EndpointDescriptor, source: String) throws {
    try Self.check(descriptor, from: source)
    entries[descriptor.id] = Entry(descriptor: descriptor, source: source)
  }

  private static func check(_ descriptor: EndpointDescriptor, from source: String) throws {
    let problems = descriptor.problems
    guard problems.isEmpty else {
      throw TokenKitError(
        .invalidDescriptor,
        "account type '\(descriptor.id)' from \(source) is invalid: "
          + problems.joined(separator: "; "))
    }
  }

  /// The settings of its own that the plugin of type `id` declares
  /// (``AccountTypePlugin/optionKeys``); empty when it declares none.
  public func optionKeys(_ id: String) -> [String] { pluginOptions[id]?.keys ?? [] }

  /// `descriptor` with the plugin of type `id`'s own settings applied
  /// (``AccountTypePlugin/configure(_:options:)``); unchanged when it declares none.
  public func configure(
    _ descriptor: EndpointDescriptor, options: [String: String], for id: String
  ) throws -> EndpointDescriptor {
    guard let configure = pluginOptions[id]?.configure else { return descriptor }
    return try configure(descriptor, options)
  }

  /// The plugin behaviour of type `id`, if its plugin supplies one.
  public func behavior(_ id: String) -> (any AccountTypeBehavior)? { behaviors[id] }

  /// What `type`'s plugin advises for the server's error `error` reports, read in the
  /// standard's terms first (``AccountTypeBehavior/advice(for:)``); nil: no advice of its own.
  public func advice(for error: TokenKitError, type: String) -> String? {
    guard let oauth = error.oauthError, let behavior = behavior(type) else { return nil }
    return behavior.advice(for: behavior.normalized(oauth))
  }

  /// ``ServiceConfiguration/requireRecordedIssuer(of:in:behavior:)`` for `account` with
  /// its type as registered here; an account whose type is gone passes, to fail later
  /// with its own message.
  public func requireRecordedIssuer(of account: Account) throws {
    guard let descriptor = try? descriptor(account.type) else { return }
    try ServiceConfiguration.requireRecordedIssuer(of: account, in: descriptor, behavior: behavior(account.type))
  }

  /// Registers `behavior` for the already registered type `id` (tests, embedding apps).
  public mutating func setBehavior(_ behavior: any AccountTypeBehavior, for id: String) {
    behaviors[id] = behavior
  }

  /// The entry registered under `id`, if any.
  public func entry(_ id: String) -> Entry? { entries[id] }

  /// The descriptor registered under `id`, or an error listing the known ids.
  public func descriptor(_ id: String) throws -> EndpointDescriptor {
    guard let entry = entries[id] else {
      let guess = EditDistance.closest(to: id, among: ids).map { "; did you mean '\($0)'?" } ?? ""
      throw TokenKitError(
        .unknownAccountType, "no account type '\(id)'\(guess)",
        remedy: .chooseType(known: ids))
    }
    return entry.descriptor
  }

  /// Every entry, ordered by id.
  public var all: [Entry] { entries.values.sorted { $0.descriptor.id < $1.descriptor.id } }

  /// Every registered id, sorted.
  public var ids: [String] { entries.keys.sorted() }
}

/// A compiled-in provider of account types: one per target under `Plugins/Accounts/`.
public protocol AccountTypePlugin: Sendable {
  /// The plugin's name, shown as the source of its descriptors.
  static var name: String { get }
  /// The account types it provides.
  static var descriptors: [EndpointDescriptor] { get }
  /// Provider behaviour by type id, where the standards leave a gap.
  static var behaviors: [String: any AccountTypeBehavior] { get }
  /// The settings of its own each type takes in `[types.ID]` (a tenant, a cloud's hosts).
  static var optionKeys: [String: [String]] { get }
  /// The descriptor with the type's own settings applied; only declared keys are passed.
  static func configure(_ descriptor: EndpointDescriptor, options: [String: String]) throws -> EndpointDescriptor
}

extension AccountTypePlugin {
  public static var behaviors: [String: any AccountTypeBehavior] { [:] }
  public static var optionKeys: [String: [String]] { [:] }
  public static func configure(
    _ descriptor: EndpointDescriptor, options: [String: String]
  ) throws
    -> EndpointDescriptor
  { descriptor }
}
