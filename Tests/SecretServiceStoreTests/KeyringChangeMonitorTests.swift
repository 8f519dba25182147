import Foundation
import TestSupport
import Testing
import TokenKit

@testable import SecretServiceStore

/// The monitor against a real gnome-keyring, changed by other processes as a user's other
/// programs would change it. Exit tests, each in a process of its own on a private bus
/// (see `KeyringDaemonRestartTests`): they lock the keyring and restart its daemon.
@Suite(ExitTestGate.trait) struct KeyringChangeMonitorTests {
  /// How long a change may take to be reported: they take milliseconds, but a machine busy
  /// with builds may hold the monitor's thread or the daemon back for seconds.
  static let bound: Duration = .seconds(60)

  @Test func reportsItemsLockingAndRestartsOnItsOwnThreadUntilStopped() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      [environment = session.environment as [String: String]] in
      OwnProcess.run(on: environment, KeyringChangeMonitorTests.reportChangesUntilStopped)
    }
    OwnProcess.report(result)
  }

  static func reportChangesUntilStopped(_ session: PrivateSession) throws {
    let recorder = ChangeRecorder()
    let monitor = try KeyringChangeMonitor { recorder.record($0) }
    let item = ["service", "tokenctl-monitor-test", "account", "ada"]

    let stored = try session.run("secret-tool", ["store", "--label", "monitor test"] + item, stdin: "secret")
    try #require(stored.status == 0, "\(stored.stderr)")
    #expect(recorder.awaitItemChange(within: Self.bound), "after store: \(recorder.changes)")
    // A new item is named, and only named: a reader that holds other items keeps them.
    #expect(
      !recorder.awaitChange(.items, within: .milliseconds(500)), "after store, all forgotten: \(recorder.changes)")

    // Replaced in place, as a refresh writes: the change names the item.
    recorder.reset()
    let replaced = try session.run("secret-tool", ["store", "--label", "monitor test"] + item, stdin: "secret 2")
    try #require(replaced.status == 0, "\(replaced.stderr)")
    #expect(recorder.awaitItemChange(within: Self.bound), "after replace: \(recorder.changes)")

    recorder.reset()
    let cleared = try session.run("secret-tool", ["clear"] + item)
    try #require(cleared.status == 0, "\(cleared.stderr)")
    #expect(recorder.awaitItemChange(within: Self.bound), "after clear: \(recorder.changes)")

    recorder.reset()
    try session.lockLoginKeyring()
    #expect(recorder.awaitChange(.lockState, within: Self.bound), "after lock: \(recorder.changes)")

    recorder.reset()
    try session.restartKeyring()
    #expect(recorder.awaitChange(.serviceRestarted, within: Self.bound), "after restart: \(recorder.changes)")

    // The subscriptions follow org.freedesktop.secrets to the new daemon.
    recorder.reset()
    let again = try session.run("secret-tool", ["store", "--label", "monitor test"] + item, stdin: "secret")
    try #require(again.status == 0, "\(again.stderr)")
    #expect(recorder.awaitItemChange(within: Self.bound), "after restart and store: \(recorder.changes)")

    // Every call came on the monitor's own thread, not on Swift's cooperative pool.
    #expect(recorder.threads == ["keyring-monitor"])
    #expect(ChangeRecorder.threadNames().contains("keyring-monitor"))

    monitor.stop()
    #expect(!ChangeRecorder.threadNames().contains("keyring-monitor"), "the monitor's thread ended")
    recorder.reset()
    let cleared2 = try session.run("secret-tool", ["clear"] + item)
    try #require(cleared2.status == 0, "\(cleared2.stderr)")
    // The change itself is reported in milliseconds (above); nothing within a second is
    // nothing at all.
    #expect(!recorder.awaitItemChange(within: .seconds(1)), "after stop: \(recorder.changes)")
    #expect(recorder.changes.isEmpty, "after stop: \(recorder.changes)")
    monitor.stop()
  }

  /// Stopping at once, before the monitor's thread ran its loop, and from `onChange`
  /// itself, both end the thread.
  @Test func stopsRightAwayAndFromItsOwnCallback() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      [environment = session.environment as [String: String]] in
      OwnProcess.run(on: environment, KeyringChangeMonitorTests.stopEarlyAndFromTheCallback)
    }
    OwnProcess.report(result)
  }

  static func stopEarlyAndFromTheCallback(_ session: PrivateSession) throws {
    for _ in 0..<20 { try KeyringChangeMonitor { _ in }.stop() }
    #expect(!ChangeRecorder.threadNames().contains("keyring-monitor"))

    let recorder = ChangeRecorder()
    let holder = MonitorHolder()
    holder.monitor = try KeyringChangeMonitor { change in
      recorder.record(change)
      holder.monitor?.stop()
    }
    let stored = try session.run("secret-tool", ["store", "--label", "x", "service", "stop-test"], stdin: "x")
    try #require(stored.status == 0, "\(stored.stderr)")
    // The first signal of a new item, ItemCreated, names it; the callback stops there.
    #expect(recorder.awaitItemChange(within: Self.bound), "\(recorder.changes)")
    let deadline = ContinuousClock.now + Self.bound
    while ChangeRecorder.threadNames().contains("keyring-monitor") && ContinuousClock.now < deadline {
      usleep(10_000)
    }
    #expect(!ChangeRecorder.threadNames().contains("keyring-monitor"))
    #expect(recorder.changes.count == 1, "no call after stop(): \(recorder.changes)")
  }

  /// A monitor started before the keyring daemon (an agent started early in a session)
  /// reports the daemon's arrival, then its changes.
  @Test func followsADaemonThatStartsLater() async throws {
    let session = try await PrivateSession.started(.busWithoutSecretService)
    defer { session.stop() }
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      [environment = session.environment as [String: String]] in
      OwnProcess.run(on: environment, KeyringChangeMonitorTests.awaitTheDaemon)
    }
    OwnProcess.report(result)
  }

  static func awaitTheDaemon(_ session: PrivateSession) throws {
    let recorder = ChangeRecorder()
    let monitor = try KeyringChangeMonitor { recorder.record($0) }
    defer { monitor.stop() }
    try session.restartKeyring()
    #expect(recorder.awaitChange(.serviceRestarted, within: Self.bound), "\(recorder.changes)")
    recorder.reset()
    let stored = try session.run("secret-tool", ["store", "--label", "x", "service", "late"], stdin: "x")
    try #require(stored.status == 0, "\(stored.stderr)")
    #expect(recorder.awaitItemChange(within: Self.bound), "\(recorder.changes)")
  }

  /// No session bus is an unavailable keyring, as it is for the store.
  @Test func withoutASessionBusItThrows() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/tokenctl-test-bus", 1)
      let error = #expect(throws: TokenKitError.self) { try KeyringChangeMonitor { _ in } }
      #expect(error?.code == .keyringUnavailable)
      #expect(error?.message.contains("session bus") == true, "\(String(describing: error))")
    }
    OwnProcess.report(result)
  }

  @Test(
    arguments: [
      ("org.freedesktop.Secret.Collection", "ItemCreated", [], KeyringChange.items),
      ("org.freedesktop.Secret.Collection", "ItemDeleted", [], .items),
      ("org.freedesktop.Secret.Collection", "ItemChanged", [], .items),
      ("org.freedesktop.Secret.Service", "CollectionCreated", [], .items),
      ("org.freedesktop.Secret.Service", "CollectionDeleted", [], .items),
      ("org.freedesktop.Secret.Service", "CollectionChanged", [], .items),
      ("org.freedesktop.DBus.Properties", "PropertiesChanged", ["Items"], nil),
      ("org.freedesktop.DBus.Properties", "PropertiesChanged", ["Items", "Modified"], nil),
      ("org.freedesktop.DBus.Properties", "PropertiesChanged", ["Label"], .items),
      ("org.freedesktop.DBus.Properties", "PropertiesChanged", ["Label", "Locked"], .lockState),
      ("org.freedesktop.DBus", "NameOwnerChanged", [], .serviceRestarted),
      ("org.freedesktop.Secret.Prompt", "Completed", [], nil),
    ] as [(String, String, [String], KeyringChange?)])
  func eachSignalMeansOneChange(interface: String, member: String, properties: [String], change: KeyringChange?) {
    #expect(KeyringChange(interface: interface, member: member, properties: properties) == change)
  }

  /// An item signal with its path names that item; a collection's never does.
  @Test func anItemSignalNamesItsItem() {
    let path = "/org/freedesktop/secrets/collection/login/7"
    for member in ["ItemCreated", "ItemChanged", "ItemDeleted"] {
      #expect(KeyringChange(interface: "org.freedesktop.Secret.Collection", member: member, item: path) == .item(path))
    }
    #expect(
      KeyringChange(interface: "org.freedesktop.Secret.Service", member: "CollectionChanged", item: path) == .items)
  }
}
