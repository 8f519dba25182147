import ApplicationConsent
import ProcessRuntime
import Synchronization
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Per-application consent (tokenctl-agent(1), "Consent"): which application may have
/// which account's tokens, asking the user when nobody decided yet, and writing each
/// decision, token and refusal to the audit log, tokens handed to tokenctl's own included.
///
/// tokenctl's own executables always pass. Every other application needs a grant
/// (`tokenctl allow`), or the user's *Allow* on the notification the first refused
/// request raises; a peer that cannot be told (``UnidentifiedPeer``) gets nothing. This
/// protects against a well-behaved program asking for an account it was never given, and
/// against a Flatpak app asking for what only another app was given; it cannot stop a
/// hostile program of the same user outside a sandbox, which can read the keyring directly.
public final class ConsentGate: Sendable {
  public typealias Ask = @Sendable (_ application: PeerApplication, _ group: String, _ account: String) async -> Answer

  /// The user's answer to "may this application have that account's tokens?".
  public enum Answer: Sendable {
    case allowed, denied
    /// Asked, but no answer came in time.
    case unanswered
    /// Nobody could be asked (no notification server).
    case notAsked
  }

  /// The audit log's name for a caller whose executable could not be read.
  static let unidentified = "an application that could not be told"

  let grants: ApplicationGrants
  let audit: AuditLog
  /// The agent's clock, which the desktop's notifications keep their times by too.
  public let clock: any WallClock
  private let ask = Mutex<Ask?>(nil)
  /// Questions on screen, by application, group and account: callers that ask the same
  /// meanwhile wait for the same answer instead of raising notifications of their own.
  private let asking = Mutex<[String: Task<Answer, Never>]>([:])
  /// Questions nobody answered, asked again only after a growing wait.
  private let backoff = Mutex(PromptBackoff())

  /// How often a question on screen looks at the grants file for a decision made another
  /// way (`tokenctl allow` or `tokenctl deny` in a terminal): a second is soon enough for a
  /// person looking from the terminal to the screen, and a stat a second costs nothing.
  static let decisionLookInterval: Duration = .seconds(1)
  /// The agent's sleep, which a test moves on by hand.
  private let sleep: @Sendable (Duration) async throws -> Void

  public init(
    grants: ApplicationGrants, audit: AuditLog, clock: any WallClock,
    sleep: @escaping @Sendable (Duration) async throws -> Void = { try await DeadlineTimer.shared.sleep(for: $0) }
  ) {
    self.grants = grants
    self.audit = audit
    self.clock = clock
    self.sleep = sleep
  }

  /// How to ask the user (a notification with *Allow* and *Deny*): true allowed, false
  /// denied, nil no answer. Without it, undecided applications are refused at once.
  public func askWith(_ ask: Ask?) { self.ask.withLock { $0 = ask } }

  /// Whether `caller` may have the tokens of `account` in `group`; asks the user when
  /// nobody decided. A refusal is logged here; a token handed out is logged by ``handedOut``.
  func admit(_ identified: PeerIdentification, group: String, account: Account, via: AuditEvent.Channel) async -> Bool {
    let caller: PeerApplication
    switch identified {
    case .failure(let peer):
      record(.refused, peer.auditApplication, group, account.qualifiedName, via, peer.auditReason)
      return false
    case .success(let application): caller = application
    }
    if caller.isOwn { return true }
    let application = caller.name
    switch grants.decision(application: application, group: group, account: account.key) {
    case .allowed: return true
    case .denied:
      record(.refused, application, group, account.qualifiedName, via, "denied")
      return false
    case .undecided:
      guard await question(caller, group, account) == .allowed else {
        record(.refused, application, group, account.qualifiedName, via, "not allowed")
        return false
      }
      return true
    }
  }

  /// The accounts of `group` that `caller` may see; nil for none.
  func visible(_ caller: PeerIdentification, group: String) -> GrantScope? {
    guard case .success(let caller) = caller else { return nil }
    if caller.isOwn { return .all }
    return grants.visibleAccounts(application: caller.name, group: group)
  }

  /// Whether `caller` may hear of `account` of `group` (its name in a signal): an
  /// application allowed that account, or every account of the group, and tokenctl's own.
  public func sees(_ caller: PeerApplication, group: String, _ account: AccountKey) -> Bool {
    switch visible(.success(caller), group: group) {
    case .all?: return true
    case .accounts(let keys)?: return keys.contains(account)
    case nil: return false
    }
  }

  /// Logs a token handed to `caller`, tokenctl's own programs included: a program that
  /// passes for ours must still leave a line. The log stays bounded however busy the
  /// clients (``AuditLog`` rotates it), and a use is recorded only under a grant.
  func handedOut(_ caller: PeerApplication, group: String, account: Account, via: AuditEvent.Channel) {
    if !caller.isOwn { grants.noteUse(application: caller.name, group: group, at: clock.now) }
    record(.token, caller.name, group, account.qualifiedName, via, nil)
  }

  /// Logs a refusal that needs no decision (a listing nobody allowed); for a caller that
  /// could not be told, the reason is why not.
  func refused(_ caller: PeerIdentification, group: String, via: AuditEvent.Channel, reason: String) {
    switch caller {
    case .success(let application): record(.refused, application.name, group, nil, via, reason)
    case .failure(let peer): record(.refused, peer.auditApplication, group, nil, via, peer.auditReason)
    }
  }

  /// Asks once for every caller waiting on the same question, and records the answer as
  /// a grant or a denial.
  private func question(_ caller: PeerApplication, _ group: String, _ account: Account) async -> Answer {
    guard let ask = ask.withLock({ $0 }) else { return .notAsked }
    let application = caller.name
    let key = "\(application)\n\(group)\n\(account.key)"
    let task = asking.withLock { pending -> Task<Answer, Never>? in
      if let task = pending[key] { return task }
      // Asked lately and left unanswered: refused without a new notification.
      guard backoff.withLock({ $0.mayAsk(key, at: clock.now) }) else { return nil }
      let name = account.qualifiedName
      let task = Task(executorPreference: ThreadPoolExecutor.shared) { [self] () -> Answer in
        let settled = await firstDecision(ask, caller, group, account)
        guard case .notification(let answer) = settled else {
          // Decided in the grants file, which holds it and whose command logged it; the
          // notification was withdrawn.
          asking.withLock { _ = $0.removeValue(forKey: key) }
          backoff.withLock { $0.noteAnswered(key) }
          return settled == .decidedElsewhere(.allowed) ? .allowed : .denied
        }
        if answer != .notAsked { record(.asked, application, group, name, .notification, nil) }
        do {
          switch answer {
          case .allowed:
            try grants.allow(
              application: application, group: group, accounts: [GrantedAccount(key: account.key, name: name)],
              at: clock.now)
            record(.allowed, application, group, name, .notification, nil)
          case .denied:
            try grants.deny(application: application, group: group, at: clock.now)
            record(.denied, application, group, nil, .notification, nil)
          case .unanswered, .notAsked: break
          }
          if answer == .unanswered {
            backoff.withLock { $0.noteUnanswered(key, at: clock.now) }
          } else if answer != .notAsked {
            backoff.withLock { $0.noteAnswered(key) }
          }
        } catch {
          // The answer holds for this request even if the file could not take it.
          record(.refused, application, group, name, .notification, "the grant was not saved: \(error)")
        }
        asking.withLock { _ = $0.removeValue(forKey: key) }
        return answer
      }
      pending[key] = task
      return task
    }
    guard let task else { return .unanswered }
    return await task.value
  }

  /// How a question was settled: by the user's answer to the notification, or by a
  /// decision written to the grants file meanwhile.
  private enum Settled: Sendable, Equatable {
    case notification(Answer)
    case decidedElsewhere(ConsentDecision)
  }

  /// The user's answer to the notification, unless the grants file decides first: then the
  /// notification is withdrawn (its task cancelled), so that it does not stay on screen
  /// offering a choice that no longer counts.
  private func firstDecision(
    _ ask: @escaping Ask, _ caller: PeerApplication, _ group: String, _ account: Account
  ) async -> Settled {
    await withTaskGroup(of: Settled?.self) { tasks in
      tasks.addTask { .notification(await ask(caller, group, account.qualifiedName)) }
      tasks.addTask { [self] in
        while !Task.isCancelled {
          let decision = grants.decision(application: caller.name, group: group, account: account.key)
          if decision != .undecided { return .decidedElsewhere(decision) }
          do { try await sleep(Self.decisionLookInterval) } catch { return nil }
        }
        return nil
      }
      var settled: Settled = .notification(.unanswered)
      for await first in tasks {
        guard let first else { continue }
        settled = first
        break
      }
      tasks.cancelAll()
      return settled
    }
  }

  private func record(
    _ kind: AuditEvent.Kind, _ application: String, _ group: String, _ account: String?, _ via: AuditEvent.Channel,
    _ reason: String?
  ) {
    audit.record(
      AuditEvent(
        time: clock.now, kind: kind, application: application, group: group, account: account, via: via,
        reason: reason))
  }
}
