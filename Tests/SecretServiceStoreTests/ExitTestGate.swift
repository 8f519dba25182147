import Foundation
import Testing

/// Whether this run may start exit tests: only one that runs them alone
/// (`make test` runs them in a `swift test` of their own, with TOKENCTL_EXIT_TESTS=1).
///
/// Swift Testing waits for an exit test's process with `waitid(P_ALL, WNOWAIT)` and spins
/// when the first child it finds is not its own: beside the integration suites, whose
/// helpers (test servers, browsers) can leave a zombie behind, that loop never ends (seen
/// in CI: a thread at 100% for ten minutes on a defunct python3).
enum ExitTestGate {
  static let isRunAlone = ProcessInfo.processInfo.environment["TOKENCTL_EXIT_TESTS"] == "1"
  static let trait = ConditionTrait.enabled(if: isRunAlone, "exit tests run in a swift test of their own (make test)")
}
