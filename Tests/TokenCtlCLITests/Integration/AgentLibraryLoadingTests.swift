import Foundation
import TestSupport
import Testing

/// What an agent that only reads the keyring loads. Its D-Bus front end and
/// its keyring monitor loaded libsecret, and libgcrypt with it, for calls that are all
/// GIO's, where the keyring's reads loaded GIO alone; on the one GLib layer they load
/// GIO alone, and libsecret comes only with a write (`KeyringLibraryLoadingTests`).
@Suite struct AgentLibraryLoadingTests {
  @Test func anAgentOnTheBusThatOnlyReadsLoadsGIOButNotLibsecret() async throws {
    let desk = try await AgentDBusTests.Desk()
    defer { desk.stop() }
    #expect(try await desk.session.tokenctl("allow", "/usr/bin/gdbus", "--all").status == 0)
    // The call starts the agent (D-Bus activation); its answer comes once the front end,
    // the monitor and the keyring's read are all up.
    let listed = try await desk.gdbus("ListAccounts", "")
    #expect(listed.status == 0, "\(listed.stderr)")
    let pid = try await TestProcess.run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method",
        "org.freedesktop.DBus.GetConnectionUnixProcessID", "org.tokenctl.Agent",
      ], environment: desk.session.environment)
    // `(uint32 1234,)`
    let number = try #require(pid.stdout.split(whereSeparator: { !$0.isNumber }).last, "\(pid.stdout) \(pid.stderr)")
    // Read to its end: /proc gives the file no size to read by.
    let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(number)/maps"))
    let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
    let loaded = ["/libgio-2.0.so", "/libsecret-1.so", "/libgcrypt.so"].filter { maps.contains($0) }
    #expect(loaded == ["/libgio-2.0.so"])
  }
}
