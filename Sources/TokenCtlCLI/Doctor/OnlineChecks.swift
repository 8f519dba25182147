import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `doctor --online`: each issuer the types in use discover their endpoints from, fetched
/// fresh (no cache) through the real transport, so that DNS, the connection, TLS and the
/// document are all tried; the servers of types with fixed endpoints, reached the same way; and this machine's clock against the servers' `Date` headers,
/// since a clock that is off makes ID tokens look expired or not yet valid.
enum OnlineChecks {
  /// Beyond this, ID tokens' `iat` and `exp` checks start to fail, and a TLS certificate
  /// may look not yet valid: a minute is more than any network delay explains.
  static let tolerableSkew: Double = 60

  static func checks(_ inventory: DoctorInventory) async -> [DoctorCheck] {
    var checks: [DoctorCheck] = []
    var skews: [(issuer: URL, seconds: Double)] = []
    for issuer in issuers(inventory) {
      let recorder = ResponseDateRecorder(inventory.context.transport, clock: inventory.context.clock)
      let discovery = MetadataDiscovery(transport: recorder, cache: nil, clock: inventory.context.clock)
      let id = "discovery:\(issuer.absoluteString)"
      let title = "Discovery at \(issuer.absoluteString)"
      do {
        _ = try await discovery.metadata(for: issuer)
        let tls = issuer.scheme == "https" ? ", over TLS with a certificate this machine trusts" : ""
        checks.append(.ok(id, title, "reached; its metadata is valid and names this issuer\(tls)"))
      } catch {
        let detail = TokenKitError(error, while: "read the discovery document of \(issuer.absoluteString)").message
        checks.append(.fail(id, title, detail, fix: fix(for: error, issuer: issuer, inventory: inventory)))
      }
      if let date = recorder.lastDate, let server = HTTPDate.parse(date.server) {
        skews.append((issuer, server.timeIntervalSince(date.local)))
      }
    }
    for url in fixedHosts(inventory) {
      let recorder = ResponseDateRecorder(inventory.context.transport, clock: inventory.context.clock)
      let host = url.host() ?? url.absoluteString
      let id = "host:\(Origin(url)?.description ?? host)"
      let title = "Server \(Origin(url)?.description ?? host)"
      do {
        let response = try await recorder.send(HTTPRequest(method: "GET", url: url))
        let tls = url.scheme == "https" ? " over TLS with a certificate this machine trusts" : ""
        if let problem = keySetProblem(response, at: url, inventory: inventory) {
          checks.append(.fail(id, title, "reached\(tls), but \(problem.detail)", fix: problem.fix))
        } else {
          checks.append(.ok(id, title, "reached\(tls) (\(url.absoluteString) answered HTTP \(response.status))"))
        }
      } catch {
        let detail = TokenKitError(.transport(error), while: "reach \(url.absoluteString)").message
        checks.append(.fail(id, title, detail, fix: fix(for: .transport(error), issuer: url, inventory: inventory)))
      }
      if let date = recorder.lastDate, let server = HTTPDate.parse(date.server) {
        skews.append((url, server.timeIntervalSince(date.local)))
      }
    }
    if let worst = skews.max(by: { abs($0.seconds) < abs($1.seconds) }) {
      checks.append(clock(worst.seconds, against: worst.issuer))
    }
    checks += await registrationChecks(inventory)
    return checks
  }

  /// Why `response` from `url` is no usable signing key set (RFC 7517 §5), when `url` is
  /// the key set of a type in use: ID tokens are checked against it, so an error there
  /// (a tenant the server does not know, say) ends every sign-in. Other addresses only
  /// show that the server is reached, whatever their status.
  private static func keySetProblem(
    _ response: HTTPResponse, at url: URL, inventory: DoctorInventory
  ) -> (detail: String, fix: String)? {
    let owner = inventory.typesInUse.first { entry in
      guard case .fixed(let endpoints) = entry.descriptor.endpoints else { return false }
      return endpoints.jwks == url
    }
    guard let type = owner?.descriptor.id else { return nil }
    do {
      _ = try AuthorizationService.body(of: response, document: "key set", bodyRequired: false)
      return nil
    } catch {
      let failure = TokenKitError(error, while: "fetch the signing keys at \(url.absoluteString)")
      return (
        failure.message,
        inventory.registry.advice(for: failure, type: type)
          ?? "Check the settings of account type '\(type)' in \(inventory.configurationPath) (tokenctl-config(5)): "
          + "ID tokens are checked against these keys."
      )
    }
  }

  /// What each type's plugin finds out about the client's registration before anyone
  /// signs in (``AccountTypeBehavior/registrationFindings(_:transport:)``), for the types in
  /// use with a client id. A finding no answer can settle is a warning where the sign-in
  /// it concerns is the one `login` would use here, and otherwise only said.
  static func registrationChecks(_ inventory: DoctorInventory) async -> [DoctorCheck] {
    guard inventory.configurationError == nil else { return [] }
    let context = inventory.context
    let deviceByDefault = !TokenCtl.Login.showsBrowser(environment: context.environment)
    var checks: [DoctorCheck] = []
    for entry in inventory.typesInUse {
      let descriptor = entry.descriptor
      guard let behavior = inventory.registry.behavior(descriptor.id),
        descriptor.endpoints != .discoveredFromUserIssuer,
        let configuration = try? await ServiceConfiguration.resolve(
          descriptor, discovery: MetadataDiscovery(transport: context.transport, cache: nil, clock: context.clock))
      else { continue }
      for finding in await behavior.registrationFindings(configuration, transport: context.transport) {
        let id = "registration:\(descriptor.id):\(finding.aspect)"
        let title = "\(finding.subject) of \(descriptor.id)"
        var fix = finding.advice ?? "See tokenctl-providers(7)."
        if finding.neededBy == .deviceSignIn {
          fix += " A sign-in with a code (`tokenctl login \(descriptor.id) --device`) needs it."
        }
        switch finding.verdict {
        case .holds:
          checks.append(.ok(id, title, finding.detail))
        case .fails:
          checks.append(.fail(id, title, finding.detail, fix: fix))
        case .unknown:
          let matters =
            switch finding.neededBy {
            case .everySignIn: true
            case .deviceSignIn: deviceByDefault
            case .browserSignIn: !deviceByDefault
            }
          checks.append(
            matters ? .warn(id, title, finding.detail, fix: fix) : .ok(id, title, finding.detail + ". " + fix))
        }
      }
    }
    return checks
  }

  /// The issuers of the types in use: a type's own, or for a type whose issuer the user
  /// names at sign-in, those its accounts signed in to.
  static func issuers(_ inventory: DoctorInventory) -> [URL] {
    var issuers: [URL] = []
    for entry in inventory.typesInUse {
      let found: [URL]
      switch entry.descriptor.endpoints {
      case .fixed: found = []
      case .discovered(let issuer): found = [issuer]
      case .discoveredFromUserIssuer:
        found = inventory.accounts(ofType: entry.descriptor.id).compactMap { $0.issuer.flatMap(OAuthSyntax.issuerURL) }
      }
      for issuer in found where !issuers.contains(issuer) { issuers.append(issuer) }
    }
    return issuers
  }

  /// For the types in use whose endpoints are fixed (no discovery document to fetch): one
  /// address on each server their tokens come from or go to, the authority's signing keys
  /// (or its token endpoint) and the API. Any HTTP answer proves DNS, the connection and
  /// TLS; an answer's status says nothing about tokens, since nothing is sent.
  static func fixedHosts(_ inventory: DoctorInventory) -> [URL] {
    var urls: [URL] = []
    var seen: Set<Origin> = []
    for entry in inventory.typesInUse {
      guard case .fixed(let endpoints) = entry.descriptor.endpoints else { continue }
      for url in [endpoints.jwks ?? endpoints.token, entry.descriptor.apiBase].compactMap({ $0 }) {
        guard let origin = Origin(url), seen.insert(origin).inserted else { continue }
        urls.append(url)
      }
    }
    return urls
  }

  private static func fix(for error: AuthorizationServiceError, issuer: URL, inventory: DoctorInventory) -> String {
    let host = issuer.host() ?? issuer.absoluteString
    guard case .transport(let transport) = error else {
      return "The server answered, but not with the issuer's metadata: check the issuer URL. "
        + "`curl -sS \(issuer.absoluteString)/.well-known/openid-configuration` shows what it sends."
    }
    switch transport.kind {
    case .tls:
      return """
        This machine does not trust the certificate of \(host), or the TLS handshake failed. If the \
        certificate comes from a private CA, install that CA: copy it to \
        /usr/local/share/ca-certificates/NAME.crt and run `sudo update-ca-certificates`. If it has \
        expired or names another host, the server must fix it. A clock far off makes valid \
        certificates look expired too: see `timedatectl`.
        """
    case .dnsFailure, .connectionFailed, .timedOut:
      return "Check the issuer URL (\(inventory.configurationPath), or the account's sign-in), the network, "
        + "and the proxy settings (https_proxy, no_proxy)."
    case .responseTooLarge, .other:
      return "Check the issuer URL and the network; `tokenctl --verbose doctor --online` logs each exchange."
    }
  }

  private static func clock(_ skew: Double, against issuer: URL) -> DoctorCheck {
    let host = issuer.host() ?? issuer.absoluteString
    let seconds = Int(abs(skew).rounded())
    guard abs(skew) > tolerableSkew else {
      return .ok("clock", "Clock", "within \(max(seconds, 1)) s of \(host)'s")
    }
    return .warn(
      "clock", "Clock",
      "this machine's clock is \(seconds) s \(skew > 0 ? "behind" : "ahead of") \(host)'s: "
        + "ID tokens may be refused as expired or not yet valid",
      fix: "Let the system keep time: `sudo timedatectl set-ntp true` (see `timedatectl status`); "
        + "without systemd-timesyncd, install an NTP client such as chrony (`sudo apt install chrony`).")
  }
}
