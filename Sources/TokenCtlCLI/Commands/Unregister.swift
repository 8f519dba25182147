import ArgumentParser
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension TokenCtl {
  /// `tokenctl unregister`: delete the client tokenctl registered at an issuer.
  struct Unregister: AsyncParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "unregister",
      abstract: "Delete the client tokenctl registered at an issuer, and forget it.",
      discussion: """
        `tokenctl login` registers tokenctl as a client at an issuer that lets clients \
        register themselves (RFC 7591) when the account type has no client id, and keeps \
        the registration in the keyring (tokenctl-keyring(5)). Revoking accounts leaves it \
        alone. This deletes it at the server with its registration access token (RFC 7592) \
        when the server gave one, then forgets it; accounts signed in with that client stop \
        refreshing. When the server refuses, the registration is kept and the exit status \
        is that of the failure. --local forgets it without asking the server.
        """)

    @Argument(help: ArgumentHelp("The issuer, as given to `tokenctl login --issuer`.", valueName: "issuer"))
    var issuer: String

    @Flag(help: "Forget the registration on this computer without telling the server.")
    var local = false

    @Flag(help: "Print what was done as JSON.")
    var json = false

    func run() async throws {
      let session = try CommandSession.open(group: nil, configured: false)
      let context = session.context
      let registrar = session.registrar
      // The registration is kept under the issuer its discovery document names, which is
      // the URL as given for every server that passes discovery's own check.
      let candidates = [issuer, OAuthSyntax.issuerURL(issuer)?.absoluteString].compactMap { $0 }
      if local {
        // Without reading the item: a damaged one must be forgettable too.
        guard let forgotten = try candidates.first(where: { try registrar.store.remove(issuer: $0) }) else {
          throw Self.noRegistration(issuer)
        }
        if json {
          context.output.write(
            JSONOutput.render(UnregisterDocument(issuer: forgotten, client_id: nil, outcome: "forgotten-locally")))
        } else {
          context.inform("Forgot the client registered at \(forgotten) (--local); it stays registered there.")
        }
        return
      }
      guard let stored = try candidates.first(where: { try registrar.store.load(issuer: $0) != nil }) else {
        throw Self.noRegistration(issuer)
      }
      let outcome: ClientRegistrar.Unregistration
      do {
        outcome = try await registrar.unregister(issuer: stored)
      } catch let error as TokenKitError {
        throw TokenKitError(
          error.code, error.message,
          recovery: "The registration is kept. Try again later, or forget it without the server: "
            + "`tokenctl unregister \(stored) --local`.")
      }
      let text: String
      let document: UnregisterDocument
      switch outcome {
      case .deleted(let registration):
        text = "Deleted client \(registration.clientID) at \(registration.issuer) and forgot it."
        document = .init(issuer: registration.issuer, client_id: registration.clientID, outcome: "deleted")
      case .unknownToServer(let registration):
        text = "\(registration.issuer) no longer knew client \(registration.clientID); forgot it."
        document = .init(issuer: registration.issuer, client_id: registration.clientID, outcome: "unknown-to-server")
      case .forgotten(let registration):
        text =
          "Forgot client \(registration.clientID) of \(registration.issuer); the server gave no way to delete it "
          + "(RFC 7592), so it stays registered there."
        document = .init(issuer: registration.issuer, client_id: registration.clientID, outcome: "forgotten")
      }
      if json {
        context.output.write(JSONOutput.render(document))
      } else {
        context.inform(text)
      }
    }

    private static func noRegistration(_ issuer: String) -> TokenKitError {
      TokenKitError(
        .notConfigured, "tokenctl registered no client at \(issuer)",
        recovery: "Only issuers that tokenctl login registered a client at can be unregistered.")
    }
  }

  /// `unregister --json`: the issuer, the client, and what became of it: `deleted` at the
  /// server, `unknown-to-server`, `forgotten` (the server offers no deletion) or
  /// `forgotten-locally` (--local).
  struct UnregisterDocument: Encodable {
    let format = JSONOutput.formatVersion
    var issuer: String
    var client_id: String?
    var outcome: String
  }
}
