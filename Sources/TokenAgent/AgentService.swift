import AccountTypeFiles
import AgentProtocol
import GitCredentialHelper
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
  let environment: [String: String]
  let settings: Settings
  let clock: any WallClock
  let transport: any HTTPTransport
  let makeStore: @Sendable (String) -> any TokenStore
  let log: @Sendable (String) -> Void
  let sleep: @Sendable (Duration) async throws -> Void
  let startedAt: Date
  private let turnstile = AccountTurnstile()
  private let serverBackoff = ServerBackoff()
  private let refreshSlots = RefreshSlots()
  /// Whether the keyring's changes reach us (``keyringChanged(item:)``): without them,
  /// nothing read from it may be kept.
  private let remembering = Atomic<Bool>(true)
  private let rescan = Mutex(Rescan())

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
    var requests = 0
    var refreshes = 0
    var lastError: String?
    var stopped = false
    /// The accounts of each group as last compared (``reportChanges()``).
    var marks: [String: [AccountKey: AccountMark]] = [:]
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

  /// `base` is the built-in types; `environment` the agent's own; `makeStore` opens a
  /// group of the keyring; `log` takes lines for standard error, never a secret; `sleep`
  /// waits between refreshes ahead.
  public init(
    base: AccountTypeRegistry, environment: [String: String], settings: Settings = Settings(),
    clock: any WallClock, transport: any HTTPTransport, makeStore: @escaping @Sendable (String) -> any TokenStore,
    log: @escaping @Sendable (String) -> Void,
    sleep: @escaping @Sendable (Duration) async throws -> Void = { try await DeadlineTimer.shared.sleep(for: $0) }
  ) {
    self.base = base
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
      case AgentMessage.Request.credentialGet: return try await credentialGet(request, handedOut: handedOut)
      case AgentMessage.Request.dockerGet: return try await dockerGet(request, handedOut: handedOut)
      case AgentMessage.Request.kubeGet: return try await kubeGet(request, handedOut: handedOut)
      case AgentMessage.Request.cargoGet: return try await cargoGet(request, handedOut: handedOut)
      case AgentMessage.Request.list: return try list(request)
      case AgentMessage.Request.status: return status()
      default: return Self.direct("unknown request kind")
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
  private func typeWarnings(of request: AgentMessage) -> [String] {
    (try? prepare(request))?.0.typeWarnings ?? []
  }

  static func direct(_ reason: String) -> AgentMessage {
    AgentMessage(AgentMessage.Answer.direct, [.init("reason", reason)])
  }

  /// What a `token` request asks, read the same way by both of its paths.
  private struct TokenAsk {
    var world: AgentWorld
    var group: String
    var stored: StoredAccount
    var minValid: Int?
    var scopes: ScopeSet?

    /// Whether it asks for the account's own token, not one for other scopes.
    var ownScopes: Bool { scopes.map { $0.isOwn(of: stored.account) } ?? true }
  }

  private func tokenAsk(_ request: AgentMessage) throws -> TokenAsk {
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
  private func token(_ request: AgentMessage, handedOut: HandedOut) async throws -> AgentMessage {
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
  private func warnOfUnmeetableMargin(_ asked: Int?, _ tokens: TokenSet, _ account: Account, _ warnings: Warnings) {
    guard let asked, let shortfall = UnmeetableMargin(asked: Double(asked), handedOut: tokens, now: clock.now) else {
      return
    }
    warnings.add(shortfall.warning(for: account))
  }

  /// The answer with the account's own `tokens`, once they are handed out: the account is
  /// kept fresh from now on, and `handedOut` told.
  private func tokenAnswer(
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
  private func token(
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

  /// git's `get`: as ``TokenCtl/Credential`` does it, from memory.
  private func credentialGet(_ request: AgentMessage, handedOut: HandedOut) async throws -> AgentMessage {
    guard let input = request["input"] else { throw DirectAnswer(reason: "no input") }
    guard let message = try? CredentialMessage.parse(Array(input.utf8)), (try? message.requireProtocolAndHost()) != nil
    else { throw DirectAnswer(reason: "a request the command line refuses") }
    return try await credential(for: message, request, handedOut: handedOut) { answer in
      guard let answer else { return nil }
      guard let text = try? answer.serialized() else { throw DirectAnswer(reason: "an answer git cannot take") }
      return text
    }
  }

  /// Docker's `get`: git's `get` for the registry's URL, answered in Docker's words
  /// (``DockerCredentials``), as `tokenctl docker-credential get` answers it.
  private func dockerGet(_ request: AgentMessage, handedOut: HandedOut) async throws -> AgentMessage {
    guard let server = request["server"] else { throw DirectAnswer(reason: "no server") }
    guard let message = CredentialMessage(requestFor: server) else {
      throw DirectAnswer(reason: "a request the command line refuses")
    }
    return try await credential(for: message, request, handedOut: handedOut) {
      DockerCredentials.answer($0, server: server)
    }
  }

  /// kubectl's exec credential: git's `get` for the API server's URL, answered as an
  /// ExecCredential, as `tokenctl kube-credential` answers it.
  private func kubeGet(_ request: AgentMessage, handedOut: HandedOut) async throws -> AgentMessage {
    let info = ExecCredential.request(request["exec-info"])
    guard let server = ExecCredential.server(option: request["server"], request: info),
      let message = CredentialMessage(requestFor: server)
    else { throw DirectAnswer(reason: "a request the command line refuses") }
    return try await credential(for: message, request, handedOut: handedOut) {
      ExecCredential.answer($0, request: info)
    }
  }

  /// cargo's credential provider `get`: git's `get` for the registry's index URL, answered
  /// in cargo's words, as `tokenctl --cargo-plugin` answers it. A registry no type serves is
  /// `url-not-supported`; `login`, `logout` and the rest are the command line's to word.
  private func cargoGet(_ request: AgentMessage, handedOut: HandedOut) async throws -> AgentMessage {
    guard let line = request["input"], let cargo = CargoCredentialRequest.decode(Array(line.utf8)),
      cargo.kind == "get", let message = CredentialMessage(requestFor: cargo.indexURL)
    else { throw DirectAnswer(reason: "a cargo request the command line answers") }
    return try await credential(for: message, request, handedOut: handedOut) { answer in
      (answer.map { CargoCredentialResponse.token($0) } ?? .urlNotSupported).line
    }
  }

  /// The `credential` answer to git's request `message`: its `answer` field is what
  /// `write` makes of the helper's answer (nil: none).
  private func credential(
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
  private func list(_ request: AgentMessage) throws -> AgentMessage {
    let (world, group) = try prepare(request)
    let type = request["type"]
    if let type { _ = try world.registry.descriptor(type) }
    var answer = AgentMessage(listings: try store(group).list(AccountQuery(type: type)))
    for warning in world.typeWarnings { answer.append("type-warning", warning) }
    return answer
  }

  /// The world of the request's context, and its group; a request for another session
  /// bus is not ours to answer.
  private func prepare(_ request: AgentMessage) throws -> (AgentWorld, String) {
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

  func world(for context: [String: String]) -> AgentWorld {
    if let world = state.withLock({ $0.worlds[context] }), world.isCurrent() { return world }
    var environment = self.environment
    for name in AgentMessage.contextVariables { environment[name] = context[name] }
    let world = AgentWorld(base: base, environment: environment)
    state.withLock { state in
      // A bound on how many environments are remembered: a client could make up many.
      if state.worlds.count >= 16 { state.worlds.removeAll() }
      state.worlds[context] = world
    }
    return world
  }

  func store(_ group: String) -> CachingTokenStore {
    state.withLock { state in
      if let store = state.stores[group] { return store }
      let store = CachingTokenStore(makeStore(group)) { [weak self] in
        self?.remembering.load(ordering: .relaxed) ?? false
      }
      state.stores[group] = store
      return store
    }
  }

  /// The keyring changed behind the agent's back: forget what was read from it (the item
  /// at `item` alone, when the change names one: a refresh by another process, say), and
  /// look again, a second later and once for a burst of changes, for accounts to keep
  /// fresh (one signed in, or unlocked).
  public func keyringChanged(item: String? = nil) {
    for store in state.withLock({ Array($0.stores.values) }) {
      if let item { store.forget(item: item) } else { store.forget() }
    }
    // What failed for the keyring's sake (locked, its daemon gone) may work now.
    wakeFailing()
    guard rescan.withLock({ $0.begin() }) else { return }
    // A thread of its own: the scan reads the keyring, which blocks, and must not hold
    // one of the few threads that answer requests. One at a time: changes that come
    // while it runs make it look once more when it is done, however many they are.
    let started = DetachedThread.start { [self] in
      repeat {
        Glibc.sleep(1)
        rescan.withLock { $0.again = false }
        keepConfiguredAccountsFresh()
        if state.withLock({ $0.observers != nil }) { reportChanges() }
      } while rescan.withLock { $0.next() }
    }
    if !started { rescan.withLock { $0 = Rescan() } }
  }

  /// The look for accounts to keep fresh after the keyring changed: at most one thread at
  /// a time (``keyringChanged(item:)``). A burst of writes by another program (an import
  /// of hundreds of items) once started a thread a second, each reading the keyring while
  /// the last still did.
  struct Rescan {
    var running = false
    /// A change came since the running look began.
    var again = false

    /// Whether to start a thread: none runs. Else the one running looks again.
    mutating func begin() -> Bool {
      if running {
        again = true
        return false
      }
      running = true
      return true
    }

    /// Whether the running thread looks again; if not, it ends.
    mutating func next() -> Bool {
      if !again { running = false }
      return again
    }
  }

  /// Nobody tells us of the keyring's changes: from now on every answer reads it.
  public func keyringUnwatched() {
    remembering.store(false, ordering: .relaxed)
    keyringChanged()
  }

  // MARK: Refreshing

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

  private func manager(world: AgentWorld, store: any TokenStore, warnings: Warnings) throws -> AccountManager {
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
