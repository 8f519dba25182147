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
      // Our parent may die or be interrupted at any moment; the refresh must still end
      // with its answer stored. A report nobody reads is not an error.
      signal(SIGPIPE, SIG_IGN)
      signal(SIGINT, SIG_IGN)
      signal(SIGHUP, SIG_IGN)
      let session = try CommandSession.open(group: group, configured: false)
      let context = session.context
      var failure: TokenKitError?
      do {
        // Refreshing without the account's lock could race another refresh and spend a
        // rotated token twice: run only with the lock handed on.
        let key = AccountKey(type: type, id: id)
        guard context.accountLocks.holds(RefreshChild.lockDescriptor, for: key, group: group) else {
          throw TokenKitError(
            .internalFailure, "\(Self.commandName) refreshes only for tokenctl, which hands it the account's lock",
            recovery: "Run `tokenctl refresh \(type):\(id)` instead.")
        }
        let manager = try session.configured().manager
        if let scopes {
          guard let scopeSet = ScopeSet(parsing: scopes) else {
            throw TokenKitError(.internalFailure, "\(Self.commandName) was given no valid scopes")
          }
          try await manager.exchangeHoldingLock(key, scopes: scopeSet)
        } else {
          try await manager.refreshHoldingLock(key)
        }
      } catch let error as TokenKitError {
        failure = error
      } catch {
        failure = TokenKitError(.internalFailure, "the refresh of \(type):\(id) failed: \(error)")
      }
      // The parent shows the warnings; this process's standard error is usually closed.
      context.output.write(bytes: RefreshReport.encode(failure, warnings: context.warnings.drain()))
    }
  }
}
