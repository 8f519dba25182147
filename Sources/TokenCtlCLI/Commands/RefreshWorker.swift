import ArgumentParser
import NativeAppSupport
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

extension TokenCtl {
  /// The refresh child of ``ProcessRefreshIsolation``: refreshes one account whose lock it
  /// inherited, stores the answer, then reports on standard output. Not for people, and
  /// hidden from help.
  struct RefreshWorker: AsyncParsableCommand {
    static let commandName = "_refresh-worker"
    static let configuration = CommandConfiguration(
      commandName: commandName, abstract: "Refresh an account whose lock this process inherited.",
      shouldDisplay: false)

    @Option var group: String
    @Option var type: String
    @Option var id: String

    func run() async throws {
      // Our parent may die or be interrupted at any moment; the refresh must still end
      // with its answer stored. A report nobody reads is not an error.
      signal(SIGPIPE, SIG_IGN)
      signal(SIGINT, SIG_IGN)
      signal(SIGHUP, SIG_IGN)
      let context = CLIContext.required
      var failure: TokenKitError?
      do {
        try await context.manager(store: context.makeStore(group)).refreshHoldingLock(AccountKey(type: type, id: id))
      } catch let error as TokenKitError {
        failure = error
      } catch {
        failure = TokenKitError(.storeFailure, "the refresh of \(type):\(id) failed: \(error)")
      }
      context.output.write(bytes: RefreshReport.encode(failure))
    }
  }
}
