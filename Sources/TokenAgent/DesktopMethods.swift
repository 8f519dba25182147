import AgentBus
import AgentProtocol
import ApplicationConsent
import NativeAppSupport
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
      return "\(caller.name) may not have \(what). If you trust it, run: tokenctl allow \(caller.name) \(grant)"
    }
  }
}
