import Foundation
import TestSupport
import Testing

/// A process holding tokens leaves no core dump, and another process of the same user
/// cannot read its memory or environment.
///
/// Run as an unprivileged user (nobody, through setpriv), since root may read any
/// process: the git helper waits for git's request on a pipe, and another process of
/// the same user tries to read its /proc entries while it waits.
@Suite struct ProcessProtectionTests {
  static let script = #"""
    bin=$1
    exec setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME=/nonexistent PATH=/usr/bin:/bin sh -c '
      sleep 5 | "$0" get &
      pid=$!
      # Wait for the exec: then /proc/PID/cmdline, readable by anyone, names the helper.
      i=0
      until tr "\0" " " < /proc/$pid/cmdline 2>/dev/null | grep -q "^$0 get"; do
        i=$((i+1)); [ $i -gt 200 ] && { echo "the helper did not start"; exit 3; }; sleep 0.01
      done
      # A dumpable process stays readable; a protected one turns unreadable within
      # milliseconds of its start. Two seconds is long enough to tell which.
      i=0
      while cat /proc/$pid/environ > /dev/null 2>&1; do
        i=$((i+1)); [ $i -gt 200 ] && { echo readable; kill $pid; exit 0; }; sleep 0.01
      done
      echo unreadable; kill $pid; exit 0
    ' "$bin"
    """#

  static var helper: String {
    URL(fileURLWithPath: TestProcess.tokenctl).deletingLastPathComponent().appendingPathComponent(
      "git-credential-tokenctl"
    ).path
  }

  @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
  func anotherProcessOfTheSameUserCannotReadTheHelper() async throws {
    let result = try await TestProcess.run("/bin/sh", ["-c", Self.script, "sh", Self.helper], environment: [:])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout == "unreadable\n", "\(result.stderr)")
  }
}
