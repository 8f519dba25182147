import ArgumentParser
import NativeAppSupport
import TokenCtlRuntime
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

extension TokenCtl {
  /// The refresh child of ``ProcessRefreshIsolation``: refreshes one account whose lock it
  /// inherited, stores the answer, then reports on standard output. Not for people, and
  /// hidden from help.
  struct RefreshWorker: AsyncParsableCommand {
    static let commandName = RefreshChild.commandName
    static let configuration = CommandConfiguration(
      commandName: commandName, abstract: "Refresh an account whose lock this process inherited.",
      shouldDisplay: false)

    @Option var group: String
    @Option var type: String
    @Option var id: String
    /// A token for these scopes instead of a refresh of the account's own.
    @Option var scopes: String?

    func run() async throws {
      let session = try CommandSession.open(group: group, configured: false)
      let context = session.context
      let failure = await RefreshChild.work(
        key: AccountKey(type: type, id: id), group: group, scopes: scopes, locks: context.accountLocks
      ) { try session.configured().manager }
      // The parent shows the warnings; this process's standard error is usually closed.
      context.output.write(bytes: RefreshReport.encode(failure, warnings: context.warnings.drain()))
    }
  }
}
