import CLibSecret
import Testing

@testable import GLibBus
@testable import SecretServiceStore

/// What the keyring monitor makes of a collection's `PropertiesChanged`, read as its
/// subscription reads it: after every write the signal carries the path of each item of
/// the collection, thousands in a large keyring, and only the names of the properties that
/// changed are needed.
@Suite struct KeyringChangeSignalTests {
  static let items = (0..<2000).map { "/org/freedesktop/secrets/collection/login/\($0)" }

  /// The signal as the monitor's subscription delivers it.
  static func delivered(_ body: BusValue) -> (signal: DBusSignal, read: String) {
    let variant = tokenctl_g_variant_ref_sink(body.variant())!
    defer { tokenctl_g_variant_unref(variant) }
    let read = BusValue(reading: variant, depth: KeyringChangeMonitor.propertiesChangedDepth)
    let signal = DBusSignal(
      sender: ":1.5", path: "/org/freedesktop/secrets/collection/login", interface: "org.freedesktop.DBus.Properties",
      member: "PropertiesChanged", body: read)
    return (signal, "\(read)")
  }

  @Test func aWriteToTheCollectionIsToldByNamesWithoutReadingTheItemsPaths() throws {
    try GLib.load()
    let (signal, read) = Self.delivered(
      .tuple([
        .string("org.freedesktop.Secret.Collection"),
        .dictionary([("Items", .objectPaths(Self.items)), ("Modified", .uint32(7))]), .strings([]),
      ]))
    let readsPaths = read.contains("/org/freedesktop/secrets/collection/login/")
    #expect(!readsPaths, "no item's path was read")
    #expect(read.contains("Items") && read.contains("Modified"))
    // The item signal before it named the item: this one says nothing more.
    #expect(KeyringChangeMonitor.change(signal) == nil)
  }

  @Test func aLockIsStillTold() throws {
    try GLib.load()
    let (signal, _) = Self.delivered(
      .tuple([
        .string("org.freedesktop.Secret.Collection"),
        .dictionary([("Items", .objectPaths(Self.items))]), .strings(["Locked"]),
      ]))
    #expect(KeyringChangeMonitor.change(signal) == .lockState)
  }
}
