import AgentProtocol
import ProcessRuntime
import TokenCtlRuntime
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
  /// lived `refreshAt` of its lifetime, refreshes it, and sleeps again. Timers, no polling,
  /// and none of libdispatch's threads (``ThreadPoolExecutor``, ``DeadlineTimer``): an idle
  /// agent uses no CPU.
  ///
  /// Why it is kept, which decides when it stops:
  /// - a client asked for its token (the default): while the account is in use (``InUse``);
  /// - `configured`: config.toml's `keep_fresh`, for as long as the agent runs;
  /// - `idleLifetime`: only keep the refresh token alive, refreshing before it has gone
  ///   unused that long (an account nobody asked for, of a type whose provider drops idle
  ///   refresh tokens). Asking for the access token upgrades such an account.
  func track(
    world: AgentWorld, group: String, account: Account, idleLifetime: Double? = nil, configured: Bool = false
  ) {
    let key = TrackKey(context: contextOf(world), group: group, account: account.key)
    let asked = idleLifetime == nil && !configured
    let now = clock.now
    let start = state.withLock { state -> Bool in
      guard !state.stopped else { return false }
      guard let tracked = state.tracked[key] else {
        state.tracked[key] = Tracked(
          name: account.name, group: group, idleLifetime: idleLifetime, lastAsked: asked ? now : nil)
        return true
      }
      if configured {
        state.tracked[key]?.lastAsked = nil
      } else if asked, tracked.lastAsked != nil {
        state.tracked[key]?.lastAsked = now
      }
      if idleLifetime == nil, tracked.idleLifetime != nil {
        // Kept until now for its refresh token, due weeks away: the access token's own
        // schedule is sooner, so the wait is cut short and the due time computed again.
        state.tracked[key]?.idleLifetime = nil
        if asked { state.tracked[key]?.lastAsked = now }
        state.wake(key)
      }
      return false
    }
    guard start else { return }
    let task = Task(executorPreference: ThreadPoolExecutor.shared) { [self] in await keepFresh(key) }
    state.withLock { $0.tracked[key]?.task = task }
  }

  /// How long an account a client asked for stays in use, and so refreshed ahead, after
  /// the last ask. A refresh ahead costs a round trip to the server and a keyring write
  /// (most of its CPU in the keyring's daemon) per account and token lifetime: with a
  /// thousand accounts of one-hour tokens, about 22 refreshes a minute. An account nobody
  /// asks for any more pays that for nothing, so it stops; the first request after the
  /// pause pays one refresh, as every request does without an agent, and keeps it fresh
  /// again from then on.
  enum InUse {
    /// At least an hour: the pauses of a working session (a meeting, lunch) find the token
    /// fresh.
    static let shortest: Double = 3600
    /// Or two of the token's lifetimes, when that is longer: at most two refreshes ahead
    /// that nobody used, whatever the lifetime.
    static let lifetimes: Double = 2

    /// Whether an account last asked for at `lastAsked`, whose tokens live `lifetime`
    /// seconds, is still in use at `now`.
    static func holds(lastAsked: Date, lifetime: Double?, now: Date) -> Bool {
      now.timeIntervalSince(lastAsked) <= max(shortest, (lifetime ?? 0) * lifetimes)
    }
  }

  /// How long `type`'s provider keeps an unused refresh token, when it drops idle ones.
  func refreshTokenIdleLifetime(_ type: String, world: AgentWorld) -> Double? {
    let registry = (try? world.configured().registry) ?? world.registry
    return try? registry.descriptor(type).refreshTokenIdleLifetime
  }

  private func contextOf(_ world: AgentWorld) -> [String: String] {
    var context: [String: String] = [:]
    for name in AgentMessage.contextVariables { context[name] = world.environment[name] }
    return context
  }

  /// When `stored` should be refreshed ahead, at `fraction` of the lifetime; nil when it
  /// cannot or need not be.
  func refreshDue(_ stored: StoredAccount, fraction: Double, idleLifetime: Double?) -> Date? {
    guard !stored.account.needsSignIn, stored.tokens.refreshToken != nil || stored.account.isServiceAccount else {
      return nil
    }
    if let idleLifetime { return stored.account.updatedAt.addingTimeInterval(idleLifetime * fraction) }
    guard let expiresAt = stored.tokens.expiresAt else { return nil }
    // Without the time of issue, the account's last update stands in for it.
    let issuedAt = stored.tokens.issuedAt ?? min(stored.account.updatedAt, expiresAt)
    let lifetime = expiresAt.timeIntervalSince(issuedAt)
    return issuedAt.addingTimeInterval(lifetime * fraction)
  }

  /// When `key`'s account is next due for its refresh ahead, from what the store holds
  /// now; nil when it cannot or need not be refreshed (it is gone, say).
  private func refreshDue(of key: TrackKey, world: AgentWorld, idleLifetime: Double?) throws -> Date? {
    guard let stored = try store(key.group).load(key.account) else { return nil }
    return refreshDue(stored, fraction: refreshFraction(world), idleLifetime: idleLifetime)
  }

  /// How long `stored`'s access token must stay valid to be handed out, for a caller that
  /// asked for `asked` seconds (nil: the token's own margin).
  ///
  /// Not only until it expires: the agent replaces the token ahead of expiry (every
  /// account it hands out is kept fresh), and a server that rotates refresh tokens may
  /// revoke the old access token then (django-oauth-toolkit deletes it). So a token due for
  /// its refresh ahead within the margin is as good as expired: the caller's refresh comes
  /// a little sooner instead, and no client holds a token the agent is about to kill.
  /// Not while the refresh ahead is failing (the server is down, say): nothing is about to
  /// replace the token then, and it is handed out for as long as it is valid.
  func handOutValidity(_ stored: StoredAccount, world: AgentWorld, group: String, asked: Double?) -> Double {
    let margin = asked ?? stored.tokens.defaultRefreshMargin
    let key = TrackKey(context: contextOf(world), group: group, account: stored.account.key)
    guard state.withLock({ $0.tracked[key]?.lastError == nil }), let expiresAt = stored.tokens.expiresAt,
      let due = refreshDue(stored, fraction: refreshFraction(world), idleLifetime: nil)
    else { return margin }
    return max(margin, expiresAt.timeIntervalSince(due) + margin)
  }

  /// The fraction of a lifetime after which `world`'s accounts are refreshed: config.toml's
  /// `[agent] refresh_at_percent`, else the agent's setting.
  func refreshFraction(_ world: AgentWorld) -> Double {
    guard let percent = try? world.configured().configuration.agent.refreshAtPercent else { return settings.refreshAt }
    return Double(percent) / 100
  }

  /// Starts keeping fresh what config.toml asks for (`[agent] keep_fresh`, a type's
  /// `keep_fresh`) and the accounts of types whose refresh tokens die when idle, in the
  /// agent's own group and every group a client asked about.
  public func keepConfiguredAccountsFresh() {
    var context: [String: String] = [:]
    for name in AgentMessage.contextVariables { context[name] = environment[name] }
    let world = world(for: context)
    let own = environment["TOKENCTL_GROUP"].flatMap { $0.isEmpty ? nil : $0 } ?? Account.defaultGroup
    let groups = Set(state.withLock { Array($0.stores.keys) } + [own])
    let configuration = (try? world.configured())
    for group in groups.sorted() {
      guard let listings = accounts(of: group, for: .keepFresh, world: world.stamp) else { continue }
      for listing in listings {
        let account = listing.account
        let keepFresh =
          configuration?.configuration.agent.keepFresh == true
          || configuration?.configuration.types[account.type]?.keepFresh == true
        if keepFresh {
          track(world: world, group: group, account: account, configured: true)
        } else if let idle = refreshTokenIdleLifetime(account.type, world: world) {
          track(world: world, group: group, account: account, idleLifetime: idle)
        }
      }
    }
  }

  private func keepFresh(_ key: TrackKey) async {
    var failures = 0
    while !Task.isCancelled {
      // After every wait: a clock stepped meanwhile leaves no watch event under some
      // systems (and under faketime), but the wall clock has moved apart from the boot clock.
      noticeWallClockStep()
      let world = world(for: key.context)
      let (idleLifetime, refreshNow, wakes) = state.withLock {
        ($0.tracked[key]?.idleLifetime, $0.tracked[key]?.refreshNow == true, $0.tracked[key]?.wakes ?? 0)
      }
      let stored: StoredAccount
      do {
        // The account's tokens are read, and dropped, before the wait: a task that held
        // them for the hours it sleeps would keep a revoked token in memory.
        guard let due = try refreshDue(of: key, world: world, idleLifetime: idleLifetime) else {
          untrack(key, why: "nothing to refresh")
          return
        }
        let wait = refreshNow ? 0 : due.timeIntervalSince(clock.now)
        if wait > 0 {
          setNext(key, due)
          await nap(key, .milliseconds(Int64(wait * 1000) + 1), seenWakes: wakes)
          continue
        }
        guard let current = try store(key.group).load(key.account) else {
          untrack(key, why: "nothing to refresh")
          return
        }
        if let lastAsked = state.withLock({ $0.tracked[key]?.lastAsked }),
          !InUse.holds(lastAsked: lastAsked, lifetime: current.tokens.lifetime, now: clock.now)
        {
          stopKeeping(key, type: key.account.type, world: world, lastAsked: lastAsked)
          if state.withLock({ $0.tracked[key] == nil }) { return }
          continue
        }
        stored = current
      } catch {
        // A locked keyring, say: look again later, without hammering it, or as soon as
        // the keyring changes (recorded, the failure is what wakeFailing looks for).
        failures += 1
        record(key, error: error)
        await pause(key, seconds: backoff(failures, error: error), error: "\(error)", seenWakes: wakes)
        continue
      }
      do {
        let remaining = stored.tokens.expiresAt.map { $0.timeIntervalSince(clock.now) } ?? 0
        // Asking for a little more validity than the token has left refreshes it, unless
        // another process did since: the refresher checks again under the lock.
        _ = try await freshTokens(
          world: world, group: key.group, stored: stored, minimumValidity: max(0, remaining) + 1, warnings: Warnings())
        failures = 0
        state.withLock {
          $0.tracked[key]?.lastError = nil
          $0.tracked[key]?.refreshNow = false
          $0.failing.remove(key)
        }
        log("refreshed \(stored.account.qualifiedName) ahead of expiry")
      } catch let error as TokenKitError where error.code == .needsSignIn || error.code == .noSuchAccount {
        record(key, error: error)
        untrack(key, why: error.message)
        return
      } catch {
        failures += 1
        record(key, error: error)
        await pause(key, seconds: backoff(failures, error: error), error: "\(error)", seenWakes: wakes)
      }
    }
  }

  /// Waits `duration` until the next refresh, or less when something cuts the wait short
  /// meanwhile (``State/wake(_:)``: a new schedule, a clock step, a keyring change).
  /// `seenWakes` is the count of wakes the wait was computed after: a wake since, there is
  /// no wait, as the wake could not cancel a wait not yet begun.
  private func nap(_ key: TrackKey, _ duration: Duration, seenWakes: Int) async {
    let sleep = self.sleep
    let nap = Task<Void, Never>(executorPreference: ThreadPoolExecutor.shared) { _ = try? await sleep(duration) }
    let kept = state.withLock { state -> Bool in
      guard state.tracked[key] != nil, state.tracked[key]?.wakes == seenWakes else { return false }
      state.tracked[key]?.nap = nap
      return true
    }
    if !kept { nap.cancel() }
    await withTaskCancellationHandler {
      await nap.value
    } onCancel: {
      nap.cancel()
    }
    state.withLock { $0.tracked[key]?.nap = nil }
  }

  /// Seconds to wait after the `failures`-th failure in a row: doubling from the first
  /// backoff to the longest, and never less than the server's `Retry-After`. A server or
  /// network failure waits no longer than the pause clients share (``ServerBackoff``): the
  /// fault may clear any minute, and nothing else would tell us.
  func backoff(_ failures: Int, error: any Error) -> Double {
    let doubling = settings.firstBackoff * Double(1 << min(max(failures - 1, 0), 20))
    let asked = (error as? TokenKitError)?.retryAfter ?? 0
    let longest =
      ServerBackoff.pauses(for: error) ? min(settings.longestBackoff, ServerBackoff.longest) : settings.longestBackoff
    return max(min(doubling, longest), asked)
  }

  /// Waits after a failure; cut short when the keyring changes (``wakeFailing()``): a
  /// locked keyring that is unlocked, a keyring daemon back.
  private func pause(_ key: TrackKey, seconds: Double, error: String, seenWakes: Int) async {
    setNext(key, clock.now.addingTimeInterval(seconds))
    log("could not refresh ahead (\(error.split(separator: "\n").first ?? "")); trying again in \(Int(seconds)) s")
    await nap(key, .milliseconds(Int64(seconds * 1000)), seenWakes: seenWakes)
  }

  /// The wall clock was set or jumped (``WallClockWatch``): every wait for a refresh is cut
  /// short and computed again from the clock as it is now; after a step (not a resume from
  /// suspend, which moves the wall and boot clocks alike) every account kept fresh is
  /// refreshed at once, since its token's expiry was a wall-clock time on the old clock.
  public func wallClockChanged() {
    noticeWallClockStep()
    state.withLock { state in
      for key in state.tracked.keys { state.wake(key) }
    }
  }

  /// Compares the wall clock with the boot clock as last seen; a difference of more than
  /// two seconds is a step, and marks every account kept fresh for a refresh now.
  public func noticeWallClockStep() {
    let offset = WallClockWatch.wallMinusBoot(wall: clock.now.timeIntervalSince1970)
    let stepped = state.withLock { state -> Double? in
      defer { state.wallMinusBoot = offset }
      guard let last = state.wallMinusBoot, abs(offset - last) > Self.clockStepTolerance else { return nil }
      for key in state.tracked.keys { state.tracked[key]?.refreshNow = true }
      return offset - last
    }
    if let stepped { log("the wall clock moved by \(Int(stepped.rounded())) s; refreshing every account kept fresh") }
  }

  /// NTP slews the clock by milliseconds a second; a larger difference is a step.
  static let clockStepTolerance: Double = 2

  /// Cuts short the wait of every account whose last refresh failed, to try again now.
  func wakeFailing() {
    state.withLock { state in
      for key in state.failing { state.wake(key) }
    }
  }

  private func setNext(_ key: TrackKey, _ date: Date) {
    state.withLock { $0.tracked[key]?.nextRefresh = date }
  }

  private func record(_ key: TrackKey, error: any Error) {
    let line = "\(error)".split(separator: "\n").first.map(String.init) ?? "\(error)"
    state.withLock { state in
      state.tracked[key]?.lastError = line
      state.lastError = line
      if state.tracked[key] != nil { state.failing.insert(key) }
    }
  }

  /// An account nobody asked for in a while (``InUse``): no more refreshes ahead of its
  /// access token. Its refresh token is still kept alive where the provider drops idle ones.
  private func stopKeeping(_ key: TrackKey, type: String, world: AgentWorld, lastAsked: Date) {
    let unused = "not asked for in \(Int(clock.now.timeIntervalSince(lastAsked) / 60)) min"
    guard let idle = refreshTokenIdleLifetime(type, world: world) else {
      untrack(key, why: unused + "; the next request refreshes it")
      return
    }
    let name = state.withLock { state -> String? in
      state.tracked[key]?.idleLifetime = idle
      state.tracked[key]?.lastAsked = nil
      return state.tracked[key]?.name
    }
    if let name { log("keeping only the refresh token of \(type):\(name) alive: \(unused)") }
  }

  private func untrack(_ key: TrackKey, why: String) {
    let name = state.withLock { state in
      state.failing.remove(key)
      return state.tracked.removeValue(forKey: key)?.name
    }
    if let name { log("no longer refreshing \(key.account.type):\(name) ahead: \(why)") }
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
    for (key, tracked) in snapshot.tracked.sorted(by: {
      ($0.value.group, $0.value.name) < ($1.value.group, $1.value.name)
    }) {
      answer.append("account", tracked.name)
      answer.append("account-type", key.account.type)
      answer.append("account-group", tracked.group)
      answer.append("account-id", key.account.id)
      answer.append("next-refresh", tracked.nextRefresh.map { "\($0.timeIntervalSinceReferenceDate)" } ?? "")
      answer.append("account-error", tracked.lastError ?? "")
    }
    return answer
  }
}
