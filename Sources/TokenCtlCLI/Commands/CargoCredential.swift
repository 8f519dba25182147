import AgentFrontEnd
import ArgumentParser
import CredentialHelpers
import NativeAppSupport
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension TokenCtl {
  /// `tokenctl cargo-credential`: cargo's credential provider protocol, answered by the same
  /// host → account rule as git's.
  struct CargoCredential: AsyncParsableCommand {
    static let commandName = "cargo-credential"
    /// What cargo passes every provider it runs, before the provider's own arguments.
    static let pluginFlag = "--cargo-plugin"

    static let configuration = CommandConfiguration(
      commandName: commandName,
      abstract: "Answer cargo's credential requests for registries an account serves.",
      discussion: """
        A cargo credential provider (cargo 1.74 or later), for a registry's \
        credential-provider = "tokenctl" in cargo's configuration: cargo runs \
        'tokenctl --cargo-plugin', which is this command, and speaks JSON lines on \
        standard input and output. 'get' answers with "Bearer TOKEN" from the account that serves the \
        registry's index URL, chosen as for git (tokenctl-types(5), [credentials.accounts] in \
        tokenctl-config(5), TOKENCTL_ACCOUNT), valid for at least a minute, and with its \
        expiry, so that cargo asks again only when it has expired. For a registry no type \
        serves it answers url-not-supported, and cargo tries its next provider. 'cargo \
        login' and 'cargo logout' change nothing and say what to run instead.
        """)

    @Flag(name: .customLong("cargo-plugin"), help: "Given by cargo, which always runs providers with it.")
    var cargoPlugin = false

    @OptionGroup var groupOption: GroupOption

    static let name = "tokenctl cargo-credential"
    /// The longest request line read: a request is a few hundred bytes.
    static let maximumLineLength = 64 * 1024

    func run() async throws {
      let running = CLIContext.running
      // The hello: the protocol versions spoken, before cargo writes anything; the front
      // end wrote it already when it hands over what it read (FrontEnd.HandOver.cargo).
      if running.cargoUnread == nil { running.output.write(CargoCredentialResponse.hello) }
      var lines = StandardInputLines(limit: Self.maximumLineLength, buffered: running.cargoUnread ?? [])
      var session: CommandSession?
      while let line = lines.next() {
        let response: CargoCredentialResponse
        if let request = CargoCredentialRequest.decode(line) {
          response = await answer(request) {
            if let session { return session }
            let opened = try CommandSession.open(group: groupOption.group)
            session = opened
            return opened
          }
        } else {
          response = .other("tokenctl speaks version 1 of cargo's credential provider protocol; update tokenctl")
        }
        running.output.write(response.line)
      }
    }

    /// The answer to one request; `session` opens the keyring and configuration once,
    /// and only for a request that needs them.
    private func answer(
      _ request: CargoCredentialRequest, session: () throws -> CommandSession
    ) async -> CargoCredentialResponse {
      switch request.kind {
      case "get":
        guard let message = CredentialMessage(requestFor: request.indexURL) else { return .urlNotSupported }
        do {
          let session = try session()
          // Not ours at all: cargo's next provider may serve it, and the user hears nothing.
          guard try Credential.helper(session, name: Self.name).serves(message) else { return .urlNotSupported }
          // Ours, but no account may answer: the helper said why on standard error.
          guard let answer = try await Credential.fill(message, session: session, name: Self.name) else {
            return .notFound
          }
          return .token(answer)
        } catch let error as TokenKitError {
          return .other([error.message, error.recovery].compactMap { $0 }.joined(separator: ". "))
        } catch {
          return .other("\(error)")
        }
      case "login":
        return .other(
          "tokenctl keeps no token given to cargo login; it answers with the tokens of accounts signed in "
            + "with 'tokenctl login' (see 'tokenctl types')")
      case "logout":
        return .other(
          "tokenctl keeps its accounts until they are revoked; see them with 'tokenctl list' and sign out "
            + "with 'tokenctl revoke'")
      default:
        return .operationNotSupported
      }
    }
  }
}
