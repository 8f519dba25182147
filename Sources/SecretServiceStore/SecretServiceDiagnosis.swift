import CLibSecret
import GLibBus
import TokenKit

/// How far the road to the keyring goes, step by step, for `tokenctl doctor`: libsecret,
/// the session bus, a Secret Service on it, the default collection, and its lock.
///
/// It reads no item and no secret, and never unlocks or prompts: it asks the bus who owns
/// `org.freedesktop.secrets` and the service which collection the `default` alias names.
/// A failure is the ``TokenKitError`` the store would throw at the same step, so that the
/// diagnosis and the commands word it alike.
public struct SecretServiceDiagnosis: Sendable {
  /// The steps, in the order a keyring operation takes them.
  public enum Step: Int, Sendable, Hashable, Comparable {
    case library, sessionBus, secretService, defaultCollection, unlocked

    public static func < (lhs: Step, rhs: Step) -> Bool { lhs.rawValue < rhs.rawValue }
  }

  /// Who provides the Secret Service.
  public enum Provider: Sendable, Hashable {
    /// A process owns `org.freedesktop.secrets`: its unique bus name.
    case running(owner: String)
    /// Nobody does yet, but the bus has a service file that starts one on the first call.
    case activatable
  }

  /// The step that failed, with the store's error for it; nil when every step passed.
  public var failure: (step: Step, error: TokenKitError)?
  public var provider: Provider?
  /// The program that owns `org.freedesktop.secrets`, from its process (see
  /// ``SecretServiceProvider``); nil when nobody runs it yet or the bus does not say.
  public var program: SecretServiceProvider?
  /// The label of the collection the `default` alias names (`Login`).
  public var defaultCollection: String?

  /// Whether `step` passed: it came before the failure, or nothing failed.
  public func passed(_ step: Step) -> Bool { failure.map { step < $0.step } ?? true }

  /// Takes the steps until one fails: a few round trips on the bus. An activatable
  /// service is started, as any keyring operation would start it.
  public static func run() -> SecretServiceDiagnosis {
    var diagnosis = SecretServiceDiagnosis()
    do {
      try GLibBridge.requireLibsecret()
    } catch {
      diagnosis.failure = (.library, error as? TokenKitError ?? TokenKitError(.keyringUnavailable, "\(error)"))
      return diagnosis
    }
    let bus: DBusConnection
    do {
      bus = try SecretServiceBus.session()
    } catch {
      diagnosis.failure = (.sessionBus, error as? TokenKitError ?? SecretServiceError.noSessionBus("\(error)"))
      return diagnosis
    }
    defer { bus.release() }
    if let owner = nameOwner(bus) {
      diagnosis.provider = .running(owner: owner)
      diagnosis.program = SecretServiceProvider.owning(bus: bus.pointer)
    } else if activatableNames(bus).contains(SecretServiceBus.serviceName) {
      diagnosis.provider = .activatable
    } else {
      diagnosis.failure = (
        .secretService,
        SecretServiceError.noSecretService(
          "nobody owns \(SecretServiceBus.serviceName), and no D-Bus service file starts it")
      )
      return diagnosis
    }
    do {
      // The first call to a service the bus starts is the one that starts it: its failure
      // is the service's, not the collection's.
      let failingStep: Step = diagnosis.provider == .activatable ? .secretService : .defaultCollection
      let (label, isLocked) = try MainContext.withOwn { try defaultCollection(failingAs: failingStep) }
      diagnosis.defaultCollection = label
      // An activated service has a process only now.
      if diagnosis.program == nil { diagnosis.program = SecretServiceProvider.owning(bus: bus.pointer) }
      if isLocked { diagnosis.failure = (.unlocked, SecretServiceError.locked([label], provider: diagnosis.program)) }
    } catch let failure as DiagnosisFailure {
      diagnosis.failure = (failure.step, failure.error)
    } catch let stale as StaleSecretService {
      diagnosis.failure = (.secretService, stale.error)
    } catch {
      diagnosis.failure = (
        .secretService, error as? TokenKitError ?? TokenKitError(.keyringUnavailable, "\(error)")
      )
    }
    return diagnosis
  }

  private struct DiagnosisFailure: Error {
    var step: Step
    var error: TokenKitError
  }

  /// The label of the default collection, and whether it is locked; throws when there is
  /// none, and when asking fails, as `step`.
  private static func defaultCollection(failingAs step: Step) throws -> (label: String, isLocked: Bool) {
    guard
      let service = try GLibBridge.call(
        "connecting to the Secret Service", { tokenctl_secret_service_get_sync(SECRET_SERVICE_NONE, nil, $0) })
    else { throw SecretServiceError.noSecretService("libsecret returned no service") }
    defer { GLib.unref(service) }
    let found: OpaquePointer?
    do {
      // SECRET_COLLECTION_NONE: the collection's properties only, none of its items.
      found = try GLibBridge.call(
        "opening the default keyring",
        {
          tokenctl_secret_collection_for_alias_sync(service, SECRET_COLLECTION_DEFAULT, SECRET_COLLECTION_NONE, nil, $0)
        })
    } catch let error as TokenKitError {
      throw DiagnosisFailure(step: step, error: error)
    }
    guard let collection = found else {
      throw DiagnosisFailure(step: .defaultCollection, error: SecretServiceError.noDefaultKeyring)
    }
    defer { GLib.unref(collection) }
    let label = tokenctl_secret_collection_get_label(collection).map(GLib.takeString) ?? "default"
    return (label, tokenctl_secret_collection_get_locked(collection) != 0)
  }

  /// `GetNameOwner`: the unique name of the process that owns the Secret Service's name,
  /// or nil when nobody does (the bus answers `NameHasNoOwner`).
  private static func nameOwner(_ bus: DBusConnection) -> String? {
    guard
      case .tuple(let reply)? = try? bus.callBus(
        "GetNameOwner", .tuple([.string(SecretServiceBus.serviceName)]), replyType: "(s)", timeout: busTimeout),
      case .string(let owner)? = reply.first
    else { return nil }
    return owner
  }

  /// `ListActivatableNames`: the names the bus can start a service for.
  private static func activatableNames(_ bus: DBusConnection) -> [String] {
    guard
      case .tuple(let reply)? = try? bus.callBus("ListActivatableNames", nil, replyType: "(as)", timeout: busTimeout),
      case .strings(let names)? = reply.first
    else { return [] }
    return names
  }

  /// How long the bus daemon, which answers at once and never starts a service to answer
  /// these, may take: 5 s, well past a busy machine's delay, and short of GDBus's 25 s.
  private static let busTimeout: Int32 = 5000
}
