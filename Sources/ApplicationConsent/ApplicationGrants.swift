import NativeAppSupport
import Synchronization
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// Which applications the user allowed to get tokens of which accounts, kept in
/// `$XDG_STATE_HOME/tokenctl/grants.json` (0600).
///
/// The agent asks ``decision(application:group:account:)`` on every request while
/// `tokenctl allow` and `deny` change the file from other processes. So:
///
/// - Every change is a read-modify-write under an exclusive `flock` on `grants.lock`
///   beside the file, and replaces the file whole (a temporary file, `fsync`, `rename`):
///   two writers never lose each other's grant, and a reader never sees half a file.
/// - Reads keep the parsed file and read it again only when `lstat` says it changed, so
///   that a request costs a stat of the file and of its directory.
/// - A file that is not private to the user, or in a directory that is not
///   (``FilePolicy/privateFile``, ``FilePolicy/privateDirectory``), grants nothing: it is
///   ignored and every application is undecided. So is a damaged file; and a change then refuses to overwrite it, since
///   that would silently drop whatever grants the user had. Each such problem is reported
///   through `warn` once, not on every request.
public final class ApplicationGrants: Sendable {
  /// grants.json.
  public let path: String
  private let directory: String
  private let lockPath: String
  private let warn: @Sendable (String) -> Void
  private let cache = Mutex(Cache())

  /// How often a use is written to the file, at most, per application and group: `apps`
  /// shows the last use to the minute, and a token request must not cost a write.
  static let useRecordingInterval: TimeInterval = 60
  /// Far more than any user's grants; a larger file is no grants file of ours.
  static let sizeLimit = 1 << 20

  private struct Cache {
    var identity: FileIdentity?
    var snapshot: Snapshot = .grants([])
    /// The identity of the file last warned about, so a problem is reported once.
    var warned: FileIdentity?
    /// When each application's use in each group was last written.
    var recordedUses: [UseKey: Date] = [:]
  }

  private struct UseKey: Hashable {
    var application: String
    var group: String
  }

  private enum Snapshot {
    case grants([Grant])
    case ignored(TokenKitError)
  }

  public init(directories: XDGDirectories, warn: @escaping @Sendable (String) -> Void) {
    directory = directories.state
    path = directories.state + "/grants.json"
    lockPath = directories.state + "/grants.lock"
    self.warn = warn
  }

  // MARK: Reading

  /// Whether `application` may get the tokens of `account` in `group`.
  public func decision(application: String, group: String, account: AccountKey) -> ConsentDecision {
    guard case .grants(let grants) = snapshot() else { return .undecided }
    switch Self.entry(for: application, in: group, of: grants)?.state {
    case .allowed(nil): return .allowed
    case .allowed(let accounts?): return accounts.contains { $0.key == account } ? .allowed : .undecided
    case .denied: return .denied
    case nil: return .undecided
    }
  }

  /// The accounts of `group` that `application` may see; nil when it has no grant there
  /// or was denied.
  public func visibleAccounts(application: String, group: String) -> GrantScope? {
    guard case .grants(let grants) = snapshot() else { return nil }
    return Self.entry(for: application, in: group, of: grants)?.scope
  }

  /// Every grant and denial, by application and group; throws when the file is ignored,
  /// with what is wrong and what to do.
  public func entries() throws -> [Grant] {
    switch snapshot() {
    case .grants(let grants): return grants
    case .ignored(let error): throw error
    }
  }

  /// The entry that decides for `application` in `group`: the group's own, else a denial
  /// in every group.
  private static func entry(for application: String, in group: String, of grants: [Grant]) -> Grant? {
    grants.first { $0.application == application && $0.group == group }
      ?? grants.first { $0.application == application && $0.group == nil }
  }

  private func snapshot() -> Snapshot {
    let identity = FileIdentity.of(file: path, directory: directory)
    let (snapshot, warning) = cache.withLock { cache -> (Snapshot, String?) in
      if cache.identity == identity { return (cache.snapshot, nil) }
      let snapshot = load()
      cache.identity = identity
      cache.snapshot = snapshot
      guard case .ignored(let error) = snapshot, cache.warned != identity else { return (snapshot, nil) }
      cache.warned = identity
      let recovery = error.recovery.map { " " + $0 } ?? ""
      return (snapshot, "\(error.message), so no application is allowed until it is fixed.\(recovery)")
    }
    // Outside the lock: the closure is the caller's and may take locks of its own.
    if let warning { warn(warning) }
    return snapshot
  }

  /// The file's grants, read and checked now: a private file of the user's in a private
  /// directory of the user's (``FilePolicy``), or nothing is granted.
  private func load() -> Snapshot {
    let elsewhere = "Point XDG_STATE_HOME elsewhere, or make \(directory) yours and private (chmod 700)."
    var info = stat()
    if lstat(directory, &info) == 0 {
      if FilePolicy.privateDirectory.problem(info) != nil {
        return .ignored(
          TokenKitError(
            .unusableFile, "ignoring \(path): its directory is not a private directory of yours", recovery: elsewhere))
      }
    } else if errno == ENOENT {
      return .grants([])
    }
    let file: PrivateFile.Contents?
    do throws(FileProblem) {
      file = try PrivateFile.read(path, limit: Self.sizeLimit, policy: .privateFile)
    } catch {
      return .ignored(refusal(error))
    }
    guard let file else { return .grants([]) }
    switch GrantsDocument.decode(file.bytes) {
    case .success(let grants): return .grants(grants)
    case .failure(let failure):
      return .ignored(
        TokenKitError(
          .corruptItem, "ignoring \(path): \(failure.reason)",
          recovery: "Fix the file or delete it, then allow applications again."))
    }
  }

  /// Why the file grants nothing, and what to do.
  private func refusal(_ problem: FileProblem) -> TokenKitError {
    let delete = "Delete it, then allow applications again."
    switch problem {
    case .symbolicLink:
      return TokenKitError(.unusableFile, "ignoring \(path): it is a symbolic link", recovery: delete)
    case .notARegularFile, .notADirectory:
      return TokenKitError(.unusableFile, "ignoring \(path): it is not a regular file", recovery: delete)
    case .owner(let owner, _):
      return TokenKitError(
        .unusableFile,
        "ignoring \(path): it belongs to another user (owner \(UserName.describe(owner))), who could grant any application access",
        recovery: delete)
    case .openToOthers(let mode):
      let who =
        FileProblem.isWritableByOthers(mode)
        ? "other users may change it (mode \(FileProblem.octal(mode))) and so grant any application access"
        : "other users may read it (mode \(FileProblem.octal(mode))), and it must be private to you"
      return TokenKitError(
        .unusableFile, "ignoring \(path): \(who)",
        recovery: "Check that it holds only what you allowed, then run `chmod 600 \(path)`; or delete it.")
    case .tooLarge:
      return TokenKitError(
        .unusableFile, "ignoring \(path): it is larger than \(Self.sizeLimit) bytes",
        recovery: "Fix the file or delete it, then allow applications again.")
    case .unreadable(let code):
      return TokenKitError(.unusableFile, "ignoring \(path): \(String(cString: strerror(code)))", recovery: delete)
    }
  }

  // MARK: Changing

  /// Allows `application` the tokens of `accounts` in `group`, or of every account of the
  /// group when nil.
  ///
  /// Accounts add to an earlier grant of some accounts; nil replaces it with all of them;
  /// and a grant replaces a denial. A grant of all accounts stays one: narrowing it takes
  /// a denial first.
  public func allow(application: String, group: String, accounts: [GrantedAccount]?, at date: Date) throws {
    try modify { grants in
      let index = grants.firstIndex { $0.application == application && $0.group == group }
      var state = Grant.State.allowed(accounts)
      var lastUse: Date?
      if let index {
        lastUse = grants[index].lastUse
        if case .allowed(let earlier) = grants[index].state {
          if let earlier, let accounts {
            // The newer name of an account granted twice wins: it is the one the user typed.
            var merged = Dictionary(earlier.map { ($0.key, $0) }, uniquingKeysWith: { $1 })
            for account in accounts { merged[account.key] = account }
            state = .allowed(merged.values.sorted { ($0.name, $0.key.id) < ($1.name, $1.key.id) })
          } else if earlier == nil {
            state = .allowed(nil)
          }
        } else {
          lastUse = nil
        }
        grants.remove(at: index)
      }
      grants.append(Grant(application: application, group: group, state: state, since: date, lastUse: lastUse))
      return true
    }
  }

  /// Removes `application`'s grants in `group`, or in every group when nil, and records a
  /// denial there so that the agent refuses without asking again. A later ``allow`` in a
  /// group replaces the denial there.
  public func deny(application: String, group: String?, at date: Date) throws {
    try modify { grants in
      grants.removeAll { $0.application == application && (group == nil || $0.group == group) }
      grants.append(Grant(application: application, group: group, state: .denied, since: date))
      return true
    }
  }

  /// Records that `application` received a token in `group` at `date`, when it holds a
  /// grant there. Writes the file at most once a ``useRecordingInterval`` per application
  /// and group, so that a busy client costs no write per request; failures are warnings.
  public func noteUse(application: String, group: String, at date: Date) {
    let key = UseKey(application: application, group: group)
    let due = cache.withLock { cache in
      if let last = cache.recordedUses[key], abs(date.timeIntervalSince(last)) < Self.useRecordingInterval {
        return false
      }
      cache.recordedUses[key] = date
      return true
    }
    guard due, case .grants(let grants) = snapshot(),
      case .allowed = grants.first(where: { $0.application == application && $0.group == group })?.state
    else { return }
    do {
      try modify { grants in
        guard let index = grants.firstIndex(where: { $0.application == application && $0.group == group }),
          case .allowed = grants[index].state, (grants[index].lastUse ?? .distantPast) < date
        else { return false }
        grants[index].lastUse = date
        return true
      }
    } catch {
      warn("could not record the last use of \(application): \((error as? TokenKitError)?.message ?? "\(error)")")
    }
  }

  /// Runs `change` on the file's grants under the lock, and writes them back when it
  /// returns true. Refuses to overwrite a file it would ignore.
  private func modify(_ change: (inout [Grant]) throws -> Bool) throws {
    try XDGDirectories.ensurePrivateDirectory(directory)
    let lock = try LockFile.open(lockPath)
    defer { close(lock) }  // Closing releases the lock.
    _ = try LockFile.lock(lock, path: lockPath, waiting: .untilFree)
    var grants: [Grant]
    switch load() {
    case .grants(let current): grants = current
    case .ignored(let error):
      throw TokenKitError(
        error.code, error.message.replacing("ignoring ", with: "will not change ", maxReplacements: 1),
        recovery: error.recovery)
    }
    guard try change(&grants) else { return }
    grants.sort { ($0.application, $0.group ?? "") < ($1.application, $1.group ?? "") }
    try AtomicFile.write(GrantsDocument(grants).encoded(), to: path)
    // The next read sees the new file's identity and reads it.
    cache.withLock { $0.identity = nil }
  }
}
