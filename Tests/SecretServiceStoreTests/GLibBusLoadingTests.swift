import Foundation
import TestSupport
import Testing

@testable import SecretServiceStore

/// What the GLib layer loads (issue 27). The keyring's reads loaded GIO alone while the
/// monitor and the agent's D-Bus front end loaded libsecret, and libgcrypt with it, for
/// calls that are all GIO's: now every user of the layer loads GIO alone, and libsecret
/// comes only with a write. An exit test: in a process of its own, which nothing else
/// has made load anything.
@Suite(ExitTestGate.trait) struct GLibBusLoadingTests {
  @Test func theMonitorLoadsGIOButNotLibsecret() async throws {
    let session = try await PrivateSession.started(.busWithoutSecretService)
    defer { session.stop() }
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      [environment = session.environment as [String: String]] in
      OwnProcess.run(on: environment) { _ in
        let monitor = try KeyringChangeMonitor { _ in }
        defer { monitor.stop() }
        // Read to its end: /proc says it is empty, and a read of its size stops short.
        let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/maps"))
        let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        #expect(maps.contains("/libgio-2.0.so"), "GIO is loaded")
        for library in ["/libsecret-1.so", "/libgcrypt.so"] {
          #expect(!maps.contains(library), "\(library) is loaded")
        }
      }
    }
    OwnProcess.report(result)
  }
}
