import CLibSecret
import GLibBus

#if canImport(Glibc)
  import Glibc
#endif

/// The program that provides the Secret Service: whoever owns `org.freedesktop.secrets`,
/// found from the bus (`GetConnectionUnixProcessID`) and that process's name, never from
/// what the service says about itself. Its unlock remedy and the wording of its
/// collections differ: gnome-keyring has keyrings, KeePassXC databases, KWallet wallets.
public enum SecretServiceProvider: Sendable, Hashable {
  case gnomeKeyring
  case keePassXC
  case kWallet
  /// Another program, by its process name (`/proc/PID/comm`).
  case other(String)

  /// The provider whose process is named `name` (`/proc/PID/comm`, at most 15 bytes:
  /// `gnome-keyring-d`).
  init(processName name: String) {
    if name.hasPrefix("gnome-keyring") {
      self = .gnomeKeyring
    } else if name.lowercased().hasPrefix("keepassxc") {
      self = .keePassXC
    } else if name.hasPrefix("kwalletd") || name == "ksecretd" {
      self = .kWallet
    } else {
      self = .other(name)
    }
  }

  /// Its name as users know it.
  public var name: String {
    switch self {
    case .gnomeKeyring: "gnome-keyring"
    case .keePassXC: "KeePassXC"
    case .kWallet: "KWallet"
    case .other(let process): process
    }
  }

  /// What it calls a collection.
  var collectionNoun: String {
    switch self {
    case .gnomeKeyring, .other: "keyring"
    case .keePassXC: "database"
    case .kWallet: "wallet"
    }
  }

  /// `the KeePassXC database 'Passwords'`; a collection without a label (KeePassXC names
  /// a database without a name so) is the default one.
  func naming(_ collection: String) -> String {
    let kind: String
    switch self {
    case .gnomeKeyring, .other: kind = collectionNoun
    case .keePassXC, .kWallet: kind = "\(name) \(collectionNoun)"
    }
    return collection.isEmpty ? "the \(kind)" : "the \(kind) '\(collection)'"
  }

  /// The provider that owns `org.freedesktop.secrets` on `bus`, or nil when nobody does or
  /// the bus does not say.
  static func owning(bus: OpaquePointer) -> SecretServiceProvider? {
    guard
      case .tuple(let reply) = try? DBusConnection(pointer: bus).callBus(
        "GetConnectionUnixProcessID", .tuple([.string(SecretServiceBus.serviceName)]), replyType: "(u)",
        timeout: 5000),
      case .uint32(let pid) = reply.first
    else { return nil }
    guard let file = fopen("/proc/\(pid)/comm", "r") else { return nil }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 64)
    guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
    let name = String(decoding: buffer.prefix { $0 != 0 && $0 != 0x0A }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return name.isEmpty ? nil : SecretServiceProvider(processName: name)
  }
}
