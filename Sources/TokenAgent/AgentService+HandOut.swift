import NativeAppSupport
import Synchronization
import TokenCtlRuntime
import TokenKit

/// What the agent hands out and when it refreshes first: the one rule of
/// ``StoredAccount/isServable(forAtLeast:clock:locks:)`` applied to its memory, one
/// refresh of an account at a time, and the server's backoff.
extension AgentService {
  /// The tokens to hand out for `stored`: the stored ones while they may be
  /// (``handOutValidity(_:world:group:asked:)``, ``StoredAccount/isServable(forAtLeast:clock:locks:)``),
  /// else fresh ones. Every answer of the agent with an account's own token comes here.
  func handOut(
    world: AgentWorld, group: String, stored: StoredAccount, asked: Double?, warnings: Warnings
  ) async throws -> TokenSet {
    if let tokens = try servableTokens(world: world, group: group, stored: stored, asked: asked) { return tokens }
    let validity = handOutValidity(stored, world: world, group: group, asked: asked)
    let margin = asked ?? stored.tokens.defaultRefreshMargin
    do {
      return try await freshTokens(
        world: world, group: group, stored: stored, minimumValidity: validity, warnings: warnings)
    } catch let error as TokenKitError where error.code == .networkFailure || error.code == .serverError {
      // A refresh before the token's margin that found no server replaced nothing: the
      // token is still good for what the caller asked.
      guard validity > margin,
        let tokens = try stored.servableTokens(
          forAtLeast: margin, clock: self.clock, locks: locks(world), registry: { try world.configured().registry })
      else { throw error }
      return tokens
    }
  }

  /// The stored tokens of `stored`, when they may be handed out as they are: valid for
  /// ``handOutValidity(_:world:group:asked:)`` more, by the one rule of
  /// ``StoredAccount/isServable(forAtLeast:clock:locks:)``, and the account's issuer still
  /// the configured one; nil when they must be refreshed first.
  func servableTokens(world: AgentWorld, group: String, stored: StoredAccount, asked: Double?) throws -> TokenSet? {
    try stored.servableTokens(
      forAtLeast: handOutValidity(stored, world: world, group: group, asked: asked), clock: self.clock,
      locks: locks(world), registry: { try world.configured().registry })
  }

  /// Fresh tokens for `stored`, one refresh of an account at a time in this process: a
  /// request that waited behind another's refresh reads the account again and finds it fresh.
  func freshTokens(
    world: AgentWorld, group: String, stored: StoredAccount, minimumValidity: Double?, warnings: Warnings
  ) async throws -> TokenSet {
    let store = self.store(group)
    let account = "\(group)\n\(stored.account.key)"
    // While the server's pause lasts and no probe is due, at once: not in the queue behind
    // a probe that may take as long as the network lets it.
    if let error = serverBackoff.current(account, now: self.clock.now) { throw error }
    return try await turnstile.run(account) {
      let current = (try? store.load(stored.account.key)) ?? stored
      let margin = minimumValidity ?? current.tokens.defaultRefreshMargin
      if let tokens = try current.servableTokens(
        forAtLeast: margin, clock: self.clock, locks: locks(world), registry: { try world.configured().registry })
      {
        return tokens
      }
      if let error = serverBackoff.admit(account, now: self.clock.now) { throw error }
      do {
        let manager = try self.manager(world: world, store: store.backing, warnings: warnings)
        // The refresh wrote this account's item and no other: read back that item alone,
        // when next asked, not the group (hundreds of item reads at a few hundred accounts).
        defer { store.forget(account: current.account.key) }
        let tokens = try await refreshSlots.run {
          try await manager.freshTokens(for: current, minimumValidity: minimumValidity)
        }
        serverBackoff.succeeded(account)
        state.withLock { $0.refreshes += 1 }
        return tokens
      } catch let error as TokenKitError where ServerBackoff.pauses(for: error) {
        serverBackoff.failed(account, error: error, now: self.clock.now)
        throw error
      } catch let error as TokenKitError where error.oauthError != nil {
        // The server answered (a refused grant, say): it is back.
        serverBackoff.succeeded(account)
        throw error
      } catch {
        serverBackoff.settled(account)
        throw error
      }
    }
  }

  func manager(world: AgentWorld, store: any TokenStore, warnings: Warnings) throws -> AccountManager {
    let (configuration, registry) = try world.configured()
    let warn: @Sendable (String) -> Void = { [self] line in
      logJournalFault(line)
      warnings.add(line)
    }
    var isolation: ProcessRefreshIsolation?
    if settings.isolatesRefreshes {
      isolation = ProcessRefreshIsolation(environment: world.environment)
      isolation?.warn = warn
      isolation?.program = settings.refreshProgram
    }
    return AccountManager.configured(
      registry: registry, store: store, transport: transport, clock: clock,
      directories: XDGDirectories(environment: world.environment), isolation: isolation, hook: configuration.hook,
      environment: world.environment, warn: warn)
  }

  /// Logs `warning` when it says that the grant journal cannot be written
  /// (``GrantJournalFault``), once in the agent's life: from then on every refresh runs
  /// without that protection, whether a client asked for it (its answer carries the
  /// warning too) or the agent refreshed ahead, which nobody else hears of.
  func logJournalFault(_ warning: String) {
    guard GrantJournalFault.isReport(warning) else { return }
    let first = state.withLock { state in
      defer { state.journalFaultLogged = true }
      return !state.journalFaultLogged
    }
    if first { log(warning) }
  }

  /// Failures that did not stop a request, for its answer.
  final class Warnings: Sendable {
    private let lines = Mutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    func drain() -> [String] {
      lines.withLock { lines in
        defer { lines = [] }; return lines
      }
    }
  }
}
