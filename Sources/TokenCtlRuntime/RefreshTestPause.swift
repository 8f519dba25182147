import NativeAppSupport
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// For tests only: holds a refresh at the moment a fault cost a rotated grant before the
/// journal (``GrantJournal``): the server has answered, the journal has the answer, and
/// the keyring does not yet. A test then locks the keyring, stops its daemon or kills the
/// process, without racing it.
///
/// Set `TOKENCTL_TEST_PAUSE` to an absolute folder: the refreshing process (the refresh
/// child, or whoever refreshes in-process) writes its process id to `paused` there, then
/// waits until `resume` exists there (two minutes at most, so that a test that died
/// leaves no process waiting for ever). Unset, which is all that users ever run, nothing
/// happens and nothing is read.
public enum RefreshTestPause {
  public static let variable = "TOKENCTL_TEST_PAUSE"
  /// The same pause for a sign-in, once the server has issued the tokens and before the
  /// keyring is written: a variable of its own, so that a test holding refreshes signs in
  /// without being held.
  public static let signInVariable = "TOKENCTL_TEST_PAUSE_SIGN_IN"
  /// How long to wait for `resume`: longer than any test's fault takes under load.
  static let limit: Duration = .seconds(120)
  static let pollInterval: Duration = .milliseconds(20)

  /// The pause `environment` asks for through `variable`, or nil.
  public static func hook(
    environment: [String: String], variable: String = variable
  ) -> (@Sendable (AccountKey) -> Void)? {
    guard let folder = environment[variable], folder.hasPrefix("/") else { return nil }
    return { _ in
      _ = PrivateFile.writeAtomically(folder + "/paused", Array("\(getpid())\n".utf8))
      let clock = ContinuousClock()
      let deadline = clock.now.advanced(by: limit)
      while access(folder + "/resume", F_OK) != 0, clock.now < deadline {
        usleep(UInt32(pollInterval.components.attoseconds / 1_000_000_000_000))
      }
    }
  }
}
