import AccountTypeFiles
import AgentProtocol
import CredentialHelpers
import NativeAppSupport
import ProcessRuntime
import Synchronization
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

/// The agent's work: answering requests from memory as the command line would answer
/// them from the keyring, and keeping the tokens it handed out fresh ahead of time.
///
/// Each answer is what the direct path would print: the same account resolution, margins,
/// checks and errors, on the same core. Where the direct path would do something only a
/// process at the user's terminal can (offer to sign in) or says why git gets nothing, the
/// agent answers `direct` and the client does it all itself.
public final class AgentService: Sendable {
  public struct Settings: Sendable {
    /// The fraction of a token's lifetime after which it is refreshed ahead.
    public var refreshAt = 0.75
    /// Refreshes run in a child process (``ProcessRefreshIsolation``), as the command
    /// line runs them; false runs them here (tests of the service alone).
    public var isolatesRefreshes = true
    /// The program whose ``RefreshChild`` runs those refreshes; nil: this one.
    public var refreshProgram: String?
    /// The longest wait after failures, and the first.
    public var longestBackoff: Double = 3600
    public var firstBackoff: Double = 30
    public init() {}
  }

  let base: AccountTypeRegistry
  /// The tools whose `get` the agent answers, each by its request's kind: the command line's
  /// list of them, which registers their commands too.
  let tools: [any ToolCredentialProtocol.Type]
  let environment: [String: String]
  let settings: Settings
  let clock: any WallClock
  let transport: any HTTPTransport
  let makeStore: @Sendable (String) -> any TokenStore
  let log: @Sendable (String) -> Void
  let sleep: @Sendable (Duration) async throws -> Void
  let startedAt: Date
  let turnstile = AccountTurnstile()
  let serverBackoff = ServerBackoff()
  let refreshSlots = RefreshSlots()
  /// Whether the keyring's changes reach us (``keyringChanged(item:)``): without them,
  /// nothing read from it may be kept.
  let remembering = Atomic<Bool>(true)
  let rescan = Mutex(Rescan())

  struct Tracked: Sendable {
    var name: String
    var group: String
    var nextRefresh: Date?
    var lastError: String?
    var task: Task<Void, Never>?
    var idleLifetime: Double?
    /// When a client last asked for the account's token: it is refreshed ahead while it is
    /// in use (``InUse``). Nil when config.toml keeps it fresh whoever asks, or when only its
    /// refresh token is kept alive (`idleLifetime`).
    var lastAsked: Date?
    /// The wait for the next refresh, cancelled to look again at once when the schedule
    /// changes (a client asked for the access token of an account kept only for its
    /// refresh token). Never a refresh in flight.
    var nap: Task<Void, Never>?
    /// Counts the calls to cut this account's wait short. A wake that comes between the
    /// task's look at its schedule and the start of its wait finds no wait to cancel; the
    /// count tells the wait it is stale (``AgentService/nap(_:_:seenWakes:)``).
    var wakes = 0
    /// The wall clock was stepped since its tokens were stored: their expiry, a wall-clock
    /// time, may be off by as much, so the account is refreshed now, whatever it says.
    var refreshNow = false
  }
  struct TrackKey: Sendable, Hashable {
    var context: [String: String]
    var group: String
    var account: AccountKey
  }
  struct State {
    var worlds: [[String: String]: AgentWorld] = [:]
    var stores: [String: CachingTokenStore] = [:]
    var tracked: [TrackKey: Tracked] = [:]
    /// The tracked accounts whose last refresh ahead failed (``Tracked/lastError``): what a
    /// keyring change wakes (``wakeFailing()``), without going over every account tracked
    /// at each of another program's writes.
    var failing: Set<TrackKey> = []
    var requests = 0
    var refreshes = 0
    var lastError: String?
    var stopped = false
    /// The accounts of each group as last compared (``reportChanges()``).
    var marks: [String: [AccountKey: AccountMark]] = [:]
    /// What each look over a group's accounts last saw (``accounts(of:for:world:)``).
    var looked: [LookKey: LookMark] = [:]
    /// How many looks went over a group's accounts, for tests of what a change costs.
    var looksOver = 0
    var observers: Observers?
    /// The wall clock less the boot clock when last looked at (``noticeWallClockStep()``).
    var wallMinusBoot: Double?
    /// Whether the log has said that the grant journal cannot be written
    /// (``logJournalFault(_:)``).
    var journalFaultLogged = false

    /// Cuts the wait of `key`'s refresh ahead short, or the wait it is about to begin.
    mutating func wake(_ key: TrackKey) {
      guard tracked[key] != nil else { return }
      tracked[key]?.wakes += 1
      tracked[key]?.nap?.cancel()
    }
  }
  let state = Mutex(State())

  /// `base` is the built-in types; `tools` the credential protocols it answers (none: it
  /// leaves every tool's `get` to the client); `environment` the agent's own; `makeStore`
  /// opens a group of the keyring; `log` takes lines for standard error, never a secret;
  /// `sleep` waits between refreshes ahead.
  public init(
    base: AccountTypeRegistry, tools: [any ToolCredentialProtocol.Type] = [], environment: [String: String],
    settings: Settings = Settings(),
    clock: any WallClock, transport: any HTTPTransport, makeStore: @escaping @Sendable (String) -> any TokenStore,
    log: @escaping @Sendable (String) -> Void,
    sleep: @escaping @Sendable (Duration) async throws -> Void = { try await DeadlineTimer.shared.sleep(for: $0) }
  ) {
    self.base = base
    self.tools = tools
    self.environment = environment
    self.settings = settings
    self.clock = clock
    self.transport = transport
    self.makeStore = makeStore
    self.log = log
    self.sleep = sleep
    startedAt = clock.now
  }

  // MARK: Requests

  /// Told of each token an answer hands out: the group and the account (for the audit log).
  public typealias HandedOut = @Sendable (_ group: String, _ account: Account) -> Void

  /// The answer to `request`, never throwing: an error is an answer too. `handedOut` is
  /// told of the token it carries, if any.
  public func answer(_ request: AgentMessage, handedOut: HandedOut = { _, _ in }) async -> AgentMessage {
    state.withLock { $0.requests += 1 }
    do {
      switch request.kind {
      case AgentMessage.Request.token: return try await token(request, handedOut: handedOut)
      case AgentMessage.Request.list: return try list(request)
      case AgentMessage.Request.status: return status()
      default:
        guard let tool = tool(answering: request.kind) else { return Self.direct("unknown request kind") }
        return try await credential(tool, request, handedOut: handedOut)
      }
    } catch let error as TokenKitError {
      // The command line warns of skipped type files before its error too.
      var answer = AgentMessage(error: error)
      for warning in typeWarnings(of: request) { answer.append("type-warning", warning) }
      return answer
    } catch let direct as DirectAnswer {
      return Self.direct(direct.reason)
    } catch {
      // Anything but the core's errors is worded by the command line's parser: let it.
      return Self.direct("an error the command line words itself")
    }
  }

  struct DirectAnswer: Error {
    var reason: String
  }

  /// The type files skipped in the request's world; none for a request not ours to answer.
  func typeWarnings(of request: AgentMessage) -> [String] {
    (try? prepare(request))?.0.typeWarnings ?? []
  }

  static func direct(_ reason: String) -> AgentMessage {
    AgentMessage(AgentMessage.Answer.direct, [.init("reason", reason)])
  }

  /// What a `token` request asks, read the same way by both of its paths.
  struct TokenAsk {
    var world: AgentWorld
    var group: String
    var stored: StoredAccount
    var minValid: Int?
    var scopes: ScopeSet?

    /// Whether it asks for the account's own token, not one for other scopes.
    var ownScopes: Bool { scopes.map { $0.isOwn(of: stored.account) } ?? true }
  }

  func tokenAsk(_ request: AgentMessage) throws -> TokenAsk {
    let (world, group) = try prepare(request)
    guard let name = request["account"] else { throw DirectAnswer(reason: "no account") }
    let minValid: Int?
    if let text = request["min-valid"] {
      guard let value = Int(text), value >= 0 else { throw DirectAnswer(reason: "bad min-valid") }
      minValid = value
    } else {
      minValid = nil
    }
    var scopes: ScopeSet?
    if let text = request["scopes"] {
      // The command line words its own refusal of a malformed one.
      guard let parsed = ScopeSet(parsing: text) else { throw DirectAnswer(reason: "bad scopes") }
      scopes = parsed
    }
    let reference = AccountReference(parsing: name, knownTypes: Set(world.registry.ids))
    let stored = try reference.load(from: store(group))
    return TokenAsk(world: world, group: group, stored: stored, minValid: minValid, scopes: scopes)
  }

  /// The answer to `request` when it can be given at once, on the caller's thread: the
  /// agent's status, or a `token` request for an account's own token that may be handed
  /// out as it is stored (``servableTokens(world:group:stored:asked:)``). nil for
  /// everything else, which ``answer(_:handedOut:)`` answers, errors included (so they
  /// are worded in one place).
  ///
  /// Why: a connection's thread that answers itself saves the hop to the pool and back,
  /// two thread wake-ups of a request that otherwise takes a few hundred microseconds
  /// (`make bench`, row 12).
  public func answerAtOnce(_ request: AgentMessage, handedOut: HandedOut) -> AgentMessage? {
    if request.kind == AgentMessage.Request.status {
      // From memory, and never behind the keyring: a pool whose threads all wait for a
      // read of it (refreshes ahead under a burst of changes) left it unanswered.
      state.withLock { $0.requests += 1 }
      return status()
    }
    guard request.kind == AgentMessage.Request.token, let ask = try? tokenAsk(request), ask.ownScopes,
      let tokens = try? servableTokens(
        world: ask.world, group: ask.group, stored: ask.stored, asked: ask.minValid.map(Double.init))
    else { return nil }
    state.withLock { $0.requests += 1 }
    return tokenAnswer(ask, tokens: tokens, warnings: Warnings(), handedOut: handedOut)
  }

  /// `tokenctl token`: as ``TokenCtl/Token`` does it, from memory.
  func token(_ request: AgentMessage, handedOut: HandedOut) async throws -> AgentMessage {
    let ask = try tokenAsk(request)
    if let scopes = ask.scopes, !ask.ownScopes {
      let answer = try await token(
        world: ask.world, group: ask.group, stored: ask.stored, scopes: scopes,
        minimumValidity: ask.minValid.map(Double.init))
      handedOut(ask.group, ask.stored.account)
      return answer
    }
    let warnings = Warnings()
    let tokens = try await handOut(
      world: ask.world, group: ask.group, stored: ask.stored, asked: ask.minValid.map(Double.init),
      warnings: warnings)
    warnOfUnmeetableMargin(ask.minValid, tokens, ask.stored.account, warnings)
    return tokenAnswer(ask, tokens: tokens, warnings: warnings, handedOut: handedOut)
  }

  /// Tells the client once when its `min-valid` asks for more than the server's tokens
  /// live (``UnmeetableMargin``), in the command's own words.
  func warnOfUnmeetableMargin(_ asked: Int?, _ tokens: TokenSet, _ account: Account, _ warnings: Warnings) {
    guard let asked, let shortfall = UnmeetableMargin(asked: Double(asked), handedOut: tokens, now: clock.now) else {
      return
    }
    warnings.add(shortfall.warning(for: account))
  }

  /// The answer with the account's own `tokens`, once they are handed out: the account is
  /// kept fresh from now on, and `handedOut` told.
  func tokenAnswer(
    _ ask: TokenAsk, tokens: TokenSet, warnings: Warnings, handedOut: HandedOut
  ) -> AgentMessage {
    track(world: ask.world, group: ask.group, account: ask.stored.account)
    handedOut(ask.group, ask.stored.account)
    var answer = AgentMessage(AgentMessage.Answer.token)
    answer.append("access-token", tokens.accessToken)
    if let scopes = ask.scopes { answer.append("scopes", scopes.text) }
    Self.describe(tokens, carrying: CarriedScopes(ownToken: tokens, granted: ask.stored.account.scopes), in: &answer)
    for warning in ask.world.typeWarnings { answer.append("type-warning", warning) }
    for warning in warnings.drain() { answer.append("warning", warning) }
    return answer
  }

  /// What `token --json` shows of a token beside it: when it expires (`expires`, seconds
  /// since 1970), the scopes it carries (`token-scopes`) and whether the token or the
  /// server said so (`token-scopes-confirmed`, 1 or 0). None is secret.
  static func describe(_ tokens: TokenSet, carrying carried: CarriedScopes, in answer: inout AgentMessage) {
    if let expiresAt = tokens.expiresAt { answer.append("expires", "\(Int64(expiresAt.timeIntervalSince1970))") }
    answer.append("token-scopes", carried.scopes.joined(separator: " "))
    answer.append("token-scopes-confirmed", carried.confirmed ? "1" : "0")
  }

  /// `tokenctl token --scope`: a token for other scopes than the account's own, from
  /// memory when one is kept and valid, else from the account's grant, one exchange of an
  /// account at a time here (it presents the same refresh token as a refresh). Not kept
  /// fresh ahead: only what the account's own token is used for is known to be wanted.
  func token(
    world: AgentWorld, group: String, stored: StoredAccount, scopes: ScopeSet, minimumValidity: Double?
  ) async throws -> AgentMessage {
    let store = self.store(group)
    let warnings = Warnings()
    let tokens: TokenSet
    let registry = { try world.configured().registry }
    let held = try store.loadToken(for: stored.account.key, scopes: scopes)
    if let held = try stored.servable(
      held, forAtLeast: minimumValidity ?? held?.defaultRefreshMargin ?? 0, clock: self.clock, locks: locks(world),
      registry: registry)
    {
      tokens = held
    } else {
      tokens = try await turnstile.run("\(group)\n\(stored.account.key)") {
        let current = (try? store.load(stored.account.key)) ?? stored
        let held = try store.loadToken(for: current.account.key, scopes: scopes)
        if let held = try current.servable(
          held, forAtLeast: minimumValidity ?? held?.defaultRefreshMargin ?? 0, clock: self.clock,
          locks: locks(world), registry: registry)
        {
          return held
        }
        let manager = try self.manager(world: world, store: store.backing, warnings: warnings)
        // The account's item (a rotated refresh token) and its scoped tokens, which are
        // dropped with any item's change.
        defer { store.forget(account: current.account.key) }
        let tokens = try await manager.freshTokens(for: current, scopes: scopes, minimumValidity: minimumValidity)
        state.withLock { $0.refreshes += 1 }
        return tokens
      }
    }
    warnOfUnmeetableMargin(minimumValidity.map { Int($0) }, tokens, stored.account, warnings)
    var answer = AgentMessage(AgentMessage.Answer.token)
    answer.append("access-token", tokens.accessToken)
    answer.append("scopes", scopes.text)
    Self.describe(tokens, carrying: CarriedScopes(tokens, asked: scopes.scopes), in: &answer)
    for warning in world.typeWarnings { answer.append("type-warning", warning) }
    for warning in warnings.drain() { answer.append("warning", warning) }
    return answer
  }

  /// The refresh locks of `world`'s user, which every tokenctl process takes.
  func locks(_ world: AgentWorld) -> FileAccountLocks {
    FileAccountLocks(directories: XDGDirectories(environment: world.environment))
  }

  /// The tool whose requests are of `kind`, if the agent answers them.
  func tool(answering kind: String) -> (any ToolCredentialProtocol.Type)? {
    tools.first { $0.requestKind == kind }
  }

  /// A tool's `get` (git's, Docker's, kubectl's, cargo's): git's `get` for the URL the
  /// request names, answered in the tool's words (``ToolCredentialProtocol``), as the tool's
  /// command answers it.
  func credential(
    _ tool: any ToolCredentialProtocol.Type, _ request: AgentMessage, handedOut: HandedOut
  ) async throws -> AgentMessage {
    guard let question = tool.question({ request[$0] }) else {
      throw DirectAnswer(reason: "a request the command line answers itself")
    }
    return try await credential(for: question.message, request, handedOut: handedOut, write: question.write)
  }

  /// The `credential` answer to git's request `message`: its `answer` field is what
  /// `write` makes of the helper's answer (nil: none).
  func credential(
    for message: CredentialMessage, _ request: AgentMessage, handedOut: HandedOut,
    write: (CredentialMessage?) throws -> String?
  ) async throws -> AgentMessage {
    let (world, group) = try prepare(request)
    let (configuration, registry) = try world.configured()
    let store = self.store(group)
    let declines = Mutex<[CredentialDecline]>([])
    var environment: [String: String] = [:]
    if let account = request["account"] { environment["TOKENCTL_ACCOUNT"] = account }
    let helper = CredentialHelper(
      registry: registry, store: store, environment: environment, rules: configuration.gitAccounts, clock: clock,
      locks: locks(world), handsOutStoredTokens: false, explain: { decline in declines.withLock { $0.append(decline) } }
    )
    let warnings = Warnings()
    let answered = Mutex<Account?>(nil)
    let answer = try await helper.get(message) { key, stored in
      let current: StoredAccount
      if let stored {
        current = stored
      } else if let loaded = try store.load(key) {
        current = loaded
      } else {
        // Gone since the choosing read it: the refresher says so in its words.
        throw DirectAnswer(reason: "the account went away")
      }
      answered.withLock { $0 = current.account }
      // The agent's one judgment of what may be handed out, as for `token` (handOut).
      return try await self.handOut(
        world: world, group: group, stored: current, asked: CredentialHelper.minimumValidity, warnings: warnings)
    }
    // Telling git's user why nothing came, or offering a sign-in, is the terminal's job.
    guard declines.withLock(\.isEmpty) else { throw DirectAnswer(reason: "a request we decline") }
    var reply = AgentMessage(AgentMessage.Answer.credential)
    if let text = try write(answer) { reply.append("answer", text) }
    if answer != nil {
      var account = answered.withLock { $0 }
      if account == nil, case .account(let choice) = try helper.choose(for: message) { account = choice.account }
      if let account {
        track(world: world, group: group, account: account)
        handedOut(group, account)
      }
    }
    for warning in world.typeWarnings { reply.append("type-warning", warning) }
    for warning in warnings.drain() { reply.append("warning", warning) }
    return reply
  }

  /// `tokenctl list`, from memory.
  func list(_ request: AgentMessage) throws -> AgentMessage {
    let (world, group) = try prepare(request)
    let type = request["type"]
    if let type { _ = try world.registry.descriptor(type) }
    var answer = AgentMessage(listings: try store(group).list(AccountQuery(type: type)))
    for warning in world.typeWarnings { answer.append("type-warning", warning) }
    return answer
  }

  /// The world of the request's context, and its group; a request for another session
  /// bus is not ours to answer.
  func prepare(_ request: AgentMessage) throws -> (AgentWorld, String) {
    guard let group = request["group"], !group.isEmpty else { throw DirectAnswer(reason: "no group") }
    let context = request.context
    guard Self.sessionBus(context) == Self.sessionBus(environment) else {
      throw DirectAnswer(reason: "another session bus")
    }
    return (world(for: context), group)
  }

  /// The session bus GLib would reach in `environment`: DBUS_SESSION_BUS_ADDRESS, else the
  /// socket `bus` in the user's runtime folder when it exists (gdbusaddress.c); nil for
  /// none. Without the variable, two environments may still mean two buses, or none.
  static func sessionBus(_ environment: [String: String]) -> String? {
    if let address = environment["DBUS_SESSION_BUS_ADDRESS"] { return address }
    // g_get_user_runtime_dir(): XDG_RUNTIME_DIR, else the user's cache folder.
    guard
      let runtime = environment["XDG_RUNTIME_DIR"] ?? environment["XDG_CACHE_HOME"]
        ?? environment["HOME"].map({ $0 + "/.cache" })
    else { return nil }
    let path = runtime + "/bus"
    return FileManager.default.fileExists(atPath: path) ? "unix:path=" + path : nil
  }
}
