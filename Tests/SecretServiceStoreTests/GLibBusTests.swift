import CLibSecret
import Synchronization
import Testing

@testable import GLibBus

/// The GLib layer the keyring monitor and the agent's D-Bus front end share:
/// its loop thread, its `GVariant` conversions and its errors.
@Suite struct GLibBusTests {
  /// The agent quit its loop with `g_main_loop_quit`, which `g_main_loop_run` forgets when
  /// it comes before the loop runs: a service stopped before its thread reached the loop
  /// ran on for good. The monitor's rule, a quit source of the context, holds at any
  /// moment, and is now the one rule of both.
  @Test func aStopBeforeTheLoopRunsIsNotLost() throws {
    try GLib.load()
    let loop = MainLoopThread(name: "glibbus-test")
    loop.stop()
    try loop.start()
    // Joins the thread: returns only if the loop saw the stop that came before it ran.
    loop.stop()
  }

  @Test func aStopOnTheLoopsOwnThreadEndsItAfterwards() async throws {
    try GLib.load()
    let loop = MainLoopThread(name: "glibbus-test")
    let ran = Atomic(false)
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      do {
        try loop.start {
          // On the loop's thread, before it runs: stopping there must not wait for itself.
          loop.stop()
          ran.store(true, ordering: .relaxed)
          done.resume()
        }
      } catch {
        Issue.record("\(error)")
        done.resume()
      }
    }
    let didRun = ran.load(ordering: .relaxed)
    #expect(didRun)
    loop.stop()
  }

  /// What the agent sends reads back as it was built, and the keyring's own types too.
  @Test func valuesReadBackAsTheyWereBuilt() throws {
    try GLib.load()
    let value = BusValue.tuple([
      .string("ada"), .objectPath("/org/freedesktop/secrets/collection/login"), .boolean(true), .uint32(7),
      .variant(.string("")), .strings(["a", "b"]), .objectPaths(["/a", "/b"]),
      .stringDictionary([("service", "tokenctl"), ("account", "ada")]),
      .dictionary([("name", .string("ada")), ("refreshable", .boolean(false))]),
      .dictionaries([[("id", .string("ada"))], []]), .tuple([]),
    ])
    let variant = tokenctl_g_variant_ref_sink(value.variant())!
    defer { tokenctl_g_variant_unref(variant) }
    #expect(String(cString: tokenctl_g_variant_get_type_string(variant)) == "(sobuvasaoa{ss}a{sv}aa{sv}())")
    #expect("\(BusValue(reading: variant))" == "\(value)")
  }

  /// A value of a type no peer of tokenctl's sends reads as an empty tuple, which matches
  /// nothing a caller looks for, rather than as a value it could mistake for another.
  @Test func aTypeNotReadIsAnEmptyTuple() throws {
    try GLib.load()
    let variant = tokenctl_g_variant_ref_sink(BusValue.tuple([.int64(-1), .int32(2), .byte(3)]).variant())!
    defer { tokenctl_g_variant_unref(variant) }
    #expect("\(BusValue(reading: variant))" == "\(BusValue.tuple([.tuple([]), .tuple([]), .tuple([])]))")
  }

  /// A peer's D-Bus error is one Swift error: its name, and GLib's message without the
  /// "GDBus.Error:NAME: " prefix, as the keyring's errors have always read.
  @Test func aRemoteErrorKeepsItsNameAndLosesThePrefix() throws {
    try TestKeyring.require()
    try GLib.load()
    let bus = try DBusConnection.session()
    defer { bus.release() }
    #expect(throws: GLibError.self) { _ = try bus.callBus("NoSuchMethod", nil, replyType: nil) }
    do {
      _ = try bus.callBus("NoSuchMethod", nil, replyType: nil)
    } catch {
      #expect(error.remoteName == "org.freedesktop.DBus.Error.UnknownMethod")
      #expect(!error.message.contains("GDBus.Error"), "\(error.message)")
      #expect(error.message.contains("NoSuchMethod"), "\(error.message)")
    }
  }

  /// A subscription delivers on the loop's thread what the bus sends, its body read.
  @Test func aSignalArrivesOnTheLoopsThread() async throws {
    try TestKeyring.require()
    try GLib.load()
    let bus = try DBusConnection.session()
    defer { bus.release() }
    let loop = MainLoopThread(name: "glibbus-signal")
    let heard = Mutex<CheckedContinuation<(String, String), Never>?>(nil)
    loop.subscribe(on: bus, sender: nil, interface: "org.tokenctl.Test", member: "Ping", path: "/org/tokenctl/Test") {
      signal in
      guard case .tuple(let body) = signal.body, case .string(let text)? = body.first else { return }
      heard.withLock { $0.take() }?.resume(returning: (text, ChangeRecorder.currentThreadName()))
    }
    try loop.start()
    defer { loop.stop() }
    // The subscription's match rule is in place once a later call was answered.
    _ = try bus.callBus("GetId", nil, replyType: nil)
    let (text, thread) = await withCheckedContinuation { continuation in
      heard.withLock { $0 = continuation }
      do {
        try bus.emit("Ping", of: "org.tokenctl.Test", at: "/org/tokenctl/Test", .tuple([.string("hello")]), to: nil)
      } catch {
        heard.withLock { $0.take() }?.resume(returning: ("\(error)", ""))
      }
    }
    #expect(text == "hello")
    #expect(thread == "glibbus-signal")
  }
}
