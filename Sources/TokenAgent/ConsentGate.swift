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

  public init(grants: ApplicationGrants, audit: AuditLog, clock: any WallClock) {
    self.grants = grants
    self.audit = audit
    self.clock = clock
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
        let answer = await ask(caller, group, name)
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
