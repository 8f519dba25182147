import Foundation
import TestSupport

extension PrivateSession {
  /// Makes this session's bus the session bus of the whole process, for code that finds
  /// the bus only as GLib does, from `DBUS_SESSION_BUS_ADDRESS`, and keeps the first
  /// connection for good (libsecret's service, the monitor's bus).
  ///
  /// Only in a process of its own, an exit test's, and before anything there has used
  /// GLib's session bus: the test process's own bus belongs to every other test.
  func becomeTheProcessSessionBus() {
    setenv("DBUS_SESSION_BUS_ADDRESS", environment["DBUS_SESSION_BUS_ADDRESS"]!, 1)
  }
}
