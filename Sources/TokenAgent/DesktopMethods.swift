import AgentBus
import AgentProtocol
import ApplicationConsent
import CredentialHelpers
import NativeAppSupport
import Synchronization
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `org.tokenctl.Agent1`'s methods (tokenctl-dbus(7)), and the same answers for
/// applications other than tokenctl's own on the agent's socket: the service's accounts
/// and tokens, behind the consent gate.
public final class DesktopMethods: AgentBusMethods {
  let service: AgentService
  let gate: ConsentGate

  public init(service: AgentService, gate: ConsentGate) {
    self.service = service
    self.gate = gate
  }

  public func listAccounts(group: String, caller: PeerIdentification) async throws(AgentBusError) -> BusValue {
    let group = Self.group(group)
    guard let scope = gate.visible(caller, group: group) else {
      gate.refused(caller, group: group, via: .dbus, reason: "listing not allowed")
      throw AgentBusError(
        .accessDenied, Self.denial(caller, what: "the accounts of group \(group)", grant: "--all --group \(group)"))
    }
    let listings: [AccountListing]
    do { listings = try service.accounts(group: group) } catch { throw Self.busError(error) }
    let shown = listings.filter { listing in
      if case .accounts(let keys) = scope { return keys.contains(listing.account.key) }
      return true
    }
    return .dictionaries(
      shown.map { listing in
        let account = listing.account
        return [
          ("type", .string(account.type)), ("id", .string(account.id)), ("name", .string(account.name)),
          ("group", .string(account.group)),
          ("expires_at", .int64(listing.tokens.expiresAt.map { Int64($0.timeIntervalSince1970) } ?? 0)),
          ("refreshable", .boolean(listing.renewable)), ("needs_sign_in", .boolean(account.needsSignIn)),
        ]
      })
  }

  public func accessToken(
    group: String, account: String, minimumValidity: UInt32, caller: PeerIdentification
  ) async throws(AgentBusError) -> (token: String, expiresAt: Int64) {
    do throws(Refusal) {
      let tokens = try await accessToken(
        group: group, account: account, minimumValidity: minimumValidity, caller: caller, via: .dbus)
      return (tokens.accessToken, tokens.expiresAt.map { Int64($0.timeIntervalSince1970) } ?? 0)
    } catch {
      switch error {
      case .denied(let message): throw AgentBusError(.accessDenied, message)
      case .core(let error): throw Self.busError(error)
      }
    }
  }

  /// Why a token was not handed out: the user did not allow it, or the core's error,
  /// which each front end words in its own terms.
  enum Refusal: Error {
    case denied(String)
    case core(any Error)
  }

  /// A token for `caller`, through the gate; `via` says where the request came from.
  func accessToken(
    group: String, account name: String, minimumValidity: UInt32, caller: PeerIdentification,
    via: AuditEvent.Channel
  ) async throws(Refusal) -> TokenSet {
    let group = Self.group(group)
    let stored: StoredAccount
    do {
      stored = try service.resolve(group: group, account: name)
    } catch {
      // Whether an account exists is for applications allowed in the group to learn.
      guard gate.visible(caller, group: group) != nil else {
        gate.refused(caller, group: group, via: via, reason: "no grant in the group")
        throw .denied(Self.denial(caller, what: "\(name) in group \(group)", grant: "\(name) --group \(group)"))
      }
      throw .core(error)
    }
    let account = stored.account
    guard await gate.admit(caller, group: group, account: account, via: via), case .success(let caller) = caller else {
      throw .denied(
        Self.denial(caller, what: account.qualifiedName, grant: "\(account.qualifiedName) --group \(group)"))
    }
    do {
      let tokens = try await service.accessToken(
        group: group, stored: stored, minimumValidity: Int(minimumValidity))
      gate.handedOut(caller, group: group, account: account, via: via)
      return tokens
    } catch {
      throw .core(error)
    }
  }

  /// The answer to a request on the agent's socket from an application that is not
  /// tokenctl's own: a token, through the gate, and nothing else.
  func answer(_ request: AgentMessage, caller: PeerIdentification) async -> AgentMessage {
    guard request.kind == AgentMessage.Request.token, let name = request["account"] else {
      gate.refused(caller, group: request["group"] ?? "", via: .socket, reason: "\(request.kind) is tokenctl's own")
      return AgentMessage(
        error: TokenKitError(
          .accessDenied, "only tokenctl's own programs may ask the agent for \(request.kind)",
          recovery: "Ask for a token (tokenctl-dbus(7) has the same on D-Bus)."))
    }
    let minimum = request["min-valid"].flatMap { UInt32($0) } ?? 0
    do throws(Refusal) {
      let tokens = try await accessToken(
        group: request["group"] ?? "", account: name, minimumValidity: minimum, caller: caller, via: .socket)
      var answer = AgentMessage(AgentMessage.Answer.token)
      answer.append("access-token", tokens.accessToken)
      return answer
    } catch {
      switch error {
      case .denied(let message): return AgentMessage(error: TokenKitError(.accessDenied, message))
      case .core(let error):
        return AgentMessage(error: error as? TokenKitError ?? TokenKitError(.keyringUnavailable, "\(error)"))
      }
    }
  }

  static func group(_ group: String) -> String { group.isEmpty ? Account.defaultGroup : group }

  static func busError(_ error: any Error) -> AgentBusError {
    if let error = error as? TokenKitError { return AgentBusError(error) }
    return AgentBusError(.unavailable, "\(error)")
  }

  /// Why `caller` gets nothing, and the command that would allow it.
  static func denial(_ caller: PeerIdentification, what: String, grant: String) -> String {
    switch caller {
    case .failure(let peer): return peer.refusal(of: what)
    case .success(let caller):
      if case .host(let host) = caller.identity {
        return "\(host) (over ssh) may not have \(what). If you trust that host, run on this machine: "
          + "tokenctl allow --host \(host) \(grant)"
      }
      return "\(caller.name) may not have \(what). If you trust it, run: tokenctl allow \(caller.name) \(grant)"
    }
  }

  // MARK: Forwarded hosts

  /// What a forwarded host may ask (tokenctl-agent(1), "Forwarding"): tokens, the accounts
  /// it was allowed, every credential helper's `get`, and whether an agent answers (a
  /// `status` that says only that it is forwarded, and to which host name). Nothing that
  /// signs in, revokes or changes anything: those are run on the machine the agent runs on.
  func mayAsk(_ kind: String) -> Bool {
    [AgentMessage.Request.token, AgentMessage.Request.list, AgentMessage.Request.status].contains(kind)
      || service.tool(answering: kind) != nil
  }

  /// The answer to a request from the forwarded host `host`: only what it may ask
  /// (``mayAsk(_:)``), only for the accounts the host was allowed (asking the user the
  /// first time), answered in the agent's own environment (its config.toml chooses the
  /// account of a helper's `get`), never the one the request names, which is the remote
  /// side's.
  func answer(_ request: AgentMessage, host: HostName) async -> AgentMessage {
    let application = PeerApplication.forwarded(host)
    let caller = PeerIdentification.success(application)
    let group = Self.group(request["group"] ?? "")
    guard mayAsk(request.kind) else {
      gate.refused(caller, group: group, via: .ssh, reason: "\(request.kind) is the local machine's")
      return AgentMessage(
        error: TokenKitError(
          .accessDenied,
          "a forwarded host may not ask the agent for \(request.kind): signing in, revoking and every other change "
            + "are made on the machine the agent runs on",
          recovery: "Run the command there, not on \(host)."))
    }
    // That the agent is there and forwarded, so that the host's `doctor` can tell a live
    // forwarding from a socket left behind; nothing of the agent's own (its pid, its
    // accounts, its counts) is the host's to learn.
    if request.kind == AgentMessage.Request.status {
      var status = AgentMessage(AgentMessage.Answer.status)
      status.append(AgentMessage.forwardedHostField, host.rawValue)
      return status
    }
    let reported = request[AgentMessage.reportedProgramField].flatMap(ReportedProgram.init)
    let local = Self.local(request, group: group, environment: service.environment)
    if request.kind == AgentMessage.Request.list { return list(local, group: group, caller: caller) }
    // The service chooses the account (a helper's `get` by config.toml's rules) and tells
    // which it handed out; the host gets the answer only once consent admits that account.
    // Until then the answer stays here: a token fetched for a host that is then refused
    // is never sent (the account is kept fresh, as any asked account is).
    let taken = HandedOutAccounts()
    let answer = await service.answer(local) { group, account in taken.add(group, account) }
    let accounts = taken.all()
    if answer.kind == AgentMessage.Answer.token || answer["answer"] != nil {
      // An answer that carries a credential but names no account is not the host's to have.
      guard !accounts.isEmpty else { return Self.hostRefusal("the agent cannot tell which account answers this") }
      for (group, account) in accounts {
        let admitted = await ReportedProgram.$asking.withValue(reported) {
          await gate.admit(caller, group: group, account: account, via: .ssh)
        }
        guard admitted else {
          return AgentMessage(
            error: TokenKitError(
              .accessDenied,
              Self.denial(caller, what: account.qualifiedName, grant: "\(account.qualifiedName) --group \(group)")))
        }
      }
      for (group, account) in accounts { gate.handedOut(application, group: group, account: account, via: .ssh) }
      return answer
    }
    // Whether an account exists is for hosts allowed in the group to learn.
    if let error = answer.error,
      error.code == TokenKitError.Code.noSuchAccount || error.code == TokenKitError.Code.ambiguousAccount,
      gate.visible(caller, group: group) == nil
    {
      gate.refused(caller, group: group, via: .ssh, reason: "no grant in the group")
      let name = request["account"] ?? "an account"
      return AgentMessage(
        error: TokenKitError(
          .accessDenied, Self.denial(caller, what: "\(name) in group \(group)", grant: "\(name) --group \(group)")))
    }
    // Nothing the agent would leave to a client of its own: the host has no keyring to
    // do it with. A helper's `get` that no account answers is git's "not found".
    if answer.kind == AgentMessage.Answer.direct {
      guard service.tool(answering: request.kind)?.directMeansNone == true else {
        return Self.hostRefusal("the agent does not answer this request from a forwarded host")
      }
      return AgentMessage(AgentMessage.Answer.credential)
    }
    return answer
  }

  /// A refusal of a host's request that only the local machine can make.
  static func hostRefusal(_ message: String) -> AgentMessage {
    AgentMessage(error: TokenKitError(.accessDenied, message, recovery: "Run it on the machine the agent runs on."))
  }

  /// The accounts one answer handed out, as the service tells them.
  private final class HandedOutAccounts: Sendable {
    private let list = Mutex<[(group: String, account: Account)]>([])
    func add(_ group: String, _ account: Account) { list.withLock { $0.append((group, account)) } }
    func all() -> [(group: String, account: Account)] { list.withLock { $0 } }
  }

  /// The accounts of `group` the host may see; refused when it may see none.
  private func list(_ request: AgentMessage, group: String, caller: PeerIdentification) -> AgentMessage {
    guard let scope = gate.visible(caller, group: group) else {
      gate.refused(caller, group: group, via: .ssh, reason: "listing not allowed")
      return AgentMessage(
        error: TokenKitError(
          .accessDenied, Self.denial(caller, what: "the accounts of group \(group)", grant: "ACCOUNT --group \(group)"))
      )
    }
    do {
      let shown = try service.accounts(group: group).filter { listing in
        if let type = request["type"], listing.account.type != type { return false }
        if case .accounts(let keys) = scope { return keys.contains(listing.account.key) }
        return true
      }
      return AgentMessage(listings: shown)
    } catch {
      return AgentMessage(error: error as? TokenKitError ?? TokenKitError(.keyringUnavailable, "\(error)"))
    }
  }

  /// `request` with the agent's own environment in place of the one it names (the remote
  /// side's HOME and session bus mean nothing here), in `group`.
  static func local(_ request: AgentMessage, group: String, environment: [String: String]) -> AgentMessage {
    var local = AgentMessage(request.kind)
    for field in request.fields where !field.key.hasPrefix("env-") && field.key != "group" {
      local.append(field.key, field.value)
    }
    local.append("group", group)
    for name in AgentMessage.contextVariables {
      if let value = environment[name] { local.append(AgentMessage.contextField(name), value) }
    }
    return local
  }
}
