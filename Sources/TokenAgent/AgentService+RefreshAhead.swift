import AgentProtocol
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif
#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension AgentService {
  /// Keeps `account` fresh from now on: a task per account that sleeps until the token has
  /// lived `refreshAt` of its lifetime, refreshes it, and sleeps again. Timers, no polling:
  /// an idle agent uses no CPU.
  func track(world: AgentWorld, group: String, account: Account) {
    let key = TrackKey(context: contextOf(world), group: group, account: account.key)
    let start = state.withLock { state -> Bool in
      guard !state.stopped, state.tracked[key] == nil else { return false }
      state.tracked[key] = Tracked(name: account.qualifiedName, group: group)
      return true
    }
    guard start else { return }
    let task = Task { [self] in await keepFresh(key) }
    state.withLock { $0.tracked[key]?.task = task }
  }

  private func contextOf(_ world: AgentWorld) -> [String: String] {
    var context: [String: String] = [:]
    for name in AgentMessage.contextVariables { context[name] = world.environment[name] }
    return context
  }

  /// When `tokens` should be refreshed ahead; nil when they cannot or need not be.
  func refreshDue(_ stored: StoredAccount) -> Date? {
    guard !stored.account.needsSignIn, stored.tokens.refreshToken != nil, let expiresAt = stored.tokens.expiresAt
    else { return nil }
    // Without the time of issue, the account's last update stands in for it.
    let issuedAt = stored.tokens.issuedAt ?? min(stored.account.updatedAt, expiresAt)
    let lifetime = expiresAt.timeIntervalSince(issuedAt)
    return issuedAt.addingTimeInterval(lifetime * settings.refreshAt)
  }

  private func keepFresh(_ key: TrackKey) async {
    var failures = 0
    while !Task.isCancelled {
      let world = world(for: key.context)
      let store = store(key.group)
      let stored: StoredAccount?
      do {
        stored = try store.load(key.account)
      } catch {
        // A locked keyring, say: look again later, without hammering it.
        failures += 1
        await pause(key, seconds: backoff(failures, error: error), error: "\(error)")
        continue
      }
      guard let stored, let due = refreshDue(stored) else {
        untrack(key, why: "nothing to refresh")
        return
      }
      let wait = due.timeIntervalSince(clock.now)
      if wait > 0 {
        setNext(key, due)
        try? await Task.sleep(for: .milliseconds(Int64(wait * 1000) + 1))
        continue
      }
      do {
        let remaining = stored.tokens.expiresAt.map { $0.timeIntervalSince(clock.now) } ?? 0
        // Asking for a little more validity than the token has left refreshes it, unless
        // another process did since: the refresher checks again under the lock.
        _ = try await freshTokens(
          world: world, group: key.group, stored: stored, minimumValidity: max(0, remaining) + 1, warnings: Warnings())
        failures = 0
        state.withLock { $0.tracked[key]?.lastError = nil }
        log("refreshed \(stored.account.qualifiedName) ahead of expiry")
      } catch let error as TokenKitError where error.code == .needsSignIn || error.code == .noSuchAccount {
        record(key, error: error)
        untrack(key, why: error.message)
        return
      } catch {
        failures += 1
        record(key, error: error)
        await pause(key, seconds: backoff(failures, error: error), error: "\(error)")
      }
    }
  }

  /// Seconds to wait after the `failures`-th failure in a row: doubling from the first
  /// backoff to the longest, and never less than the server's `Retry-After`.
  func backoff(_ failures: Int, error: any Error) -> Double {
    let doubling = settings.firstBackoff * Double(1 << min(max(failures - 1, 0), 20))
    let asked = (error as? TokenKitError)?.retryAfter ?? 0
    return max(min(doubling, settings.longestBackoff), asked)
  }

  private func pause(_ key: TrackKey, seconds: Double, error: String) async {
    setNext(key, clock.now.addingTimeInterval(seconds))
    log("could not refresh ahead (\(error.split(separator: "\n").first ?? "")); trying again in \(Int(seconds)) s")
    try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
  }

  private func setNext(_ key: TrackKey, _ date: Date) {
    state.withLock { $0.tracked[key]?.nextRefresh = date }
  }

  private func record(_ key: TrackKey, error: any Error) {
    let line = "\(error)".split(separator: "\n").first.map(String.init) ?? "\(error)"
    state.withLock { state in
      state.tracked[key]?.lastError = line
      state.lastError = line
    }
  }

  private func untrack(_ key: TrackKey, why: String) {
    let name = state.withLock { $0.tracked.removeValue(forKey: key)?.name }
    if let name { log("no longer refreshing \(name) ahead: \(why)") }
  }

  /// Stops every refresh-ahead task; requests still get answers.
  public func stop() {
    let tasks = state.withLock { state in
      state.stopped = true
      return state.tracked.values.compactMap(\.task)
    }
    for task in tasks { task.cancel() }
  }

  // MARK: Status

  /// The `status` answer: who the agent is and what it holds. No token.
  func status() -> AgentMessage {
    var answer = AgentMessage(AgentMessage.Answer.status)
    let snapshot = state.withLock { $0 }
    answer.append("pid", "\(getpid())")
    answer.append("started", "\(startedAt.timeIntervalSinceReferenceDate)")
    answer.append("requests", "\(snapshot.requests)")
    answer.append("refreshes", "\(snapshot.refreshes)")
    answer.append("held", "\(snapshot.stores.values.reduce(0) { $0 + $1.heldAccounts })")
    if let lastError = snapshot.lastError { answer.append("last-error", lastError) }
    for (key, tracked) in snapshot.tracked.sorted(by: { ($0.value.group, $0.value.name) < ($1.value.group, $1.value.name) })
    {
      answer.append("account", tracked.name)
      answer.append("account-group", tracked.group)
      answer.append("account-id", key.account.id)
      answer.append("next-refresh", tracked.nextRefresh.map { "\($0.timeIntervalSinceReferenceDate)" } ?? "")
      answer.append("account-error", tracked.lastError ?? "")
    }
    return answer
  }
}
