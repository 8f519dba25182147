import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What Microsoft shows about an app registration before anyone signs in, as a diagnosis
/// asks it: the same checks MSAL and the Azure CLI make before a sign-in, and those the
/// platform's answers allow without one.
///
/// - The redirect: an authorization request with `prompt=none` and no browser session
///   signs no one in, and Microsoft sends its answer (an error) to the redirect URI only
///   when that URI is registered; otherwise it shows AADSTS50011 on its own page ("If the
///   values match, Microsoft Entra ID sends the user to the redirect URI",
///   https://learn.microsoft.com/en-us/troubleshoot/azure/active-directory/error-code-aadsts50011-redirect-uri-mismatch;
///   `prompt=none`, https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow).
///   Under which platform the URI is registered shows only at sign-in.
/// - "Allow public client flows": Microsoft's documentation says when the device grant is
///   refused for it (AADSTS7000218) only as "at the token endpoint", not whether before or
///   after the person signs in, so no request short of a sign-in is known to tell; the
///   finding says where to look.
///
/// The tenant needs no probe here: Microsoft answers AADSTS90002 at the tenant's signing
/// keys, which every diagnosis of a type with fixed endpoints fetches.
struct MicrosoftRegistrationProbe {
  var configuration: ServiceConfiguration
  var transport: any HTTPTransport

  func findings() async -> [RegistrationFinding] {
    var findings: [RegistrationFinding] = []
    if let redirect = await redirect() { findings.append(redirect) }
    findings.append(publicClientFlows)
    return findings
  }

  /// Where the app registration's settings are, for people.
  private var registration: String {
    "In the Microsoft Entra admin center, open App registrations, the app with client id \(configuration.client.id), "
      + "then its Authentication page"
  }

  /// The redirect URI a browser sign-in sends, without its port: Microsoft ignores the
  /// port of a localhost redirect ("Localhost exceptions",
  /// https://learn.microsoft.com/en-us/entra/identity-platform/reply-url).
  private var redirectURI: String? {
    guard case .loopback(let host, _, let path) = configuration.descriptor.redirect else { return nil }
    return "http://\(host)\(path)"
  }

  private func redirect() async -> RegistrationFinding? {
    guard let authorization = configuration.endpoints.authorization, let redirectURI,
      var components = URLComponents(url: authorization, resolvingAgainstBaseURL: false)
    else { return nil }
    let shown = redirectURI.hasSuffix("/") ? String(redirectURI.dropLast()) : redirectURI
    func finding(
      _ verdict: RegistrationFinding.Verdict, _ detail: String, advice: String? = nil
    )
      -> RegistrationFinding
    {
      RegistrationFinding(
        aspect: "redirect", subject: "Redirect \(shown)", verdict: verdict, neededBy: .browserSignIn,
        detail: detail, advice: advice)
    }
    let platform =
      "that it is listed under \"Mobile and desktop applications\", not \"Web\" (sign-in would end on AADSTS7000218) "
      + "or \"Single-page application\" (AADSTS9002327), shows only at sign-in"
    components.queryItems =
      (components.queryItems ?? []) + [
        URLQueryItem(name: "client_id", value: configuration.client.id),
        URLQueryItem(name: "response_type", value: "code"),
        URLQueryItem(name: "redirect_uri", value: redirectURI),
        URLQueryItem(name: "scope", value: "openid"),
        // Signs no one in: without a browser session Microsoft answers with an error.
        URLQueryItem(name: "prompt", value: "none"),
      ]
    guard let url = components.url else { return nil }
    let response: HTTPResponse
    do {
      response = try await transport.send(HTTPRequest(method: "GET", url: url))
    } catch {
      return finding(.unknown, "not checked: \(url.host() ?? "the server") was not reached (\(error))")
    }
    if (300..<400).contains(response.status), let location = response.header("Location"),
      let target = URL(string: location), target.scheme == "http",
      target.host()?.lowercased() == URL(string: redirectURI)?.host()?.lowercased()
    {
      return finding(
        .holds,
        "registered: Microsoft sent its answer to a request that signs no one in (prompt=none) there; \(platform)")
    }
    switch Self.aadsts(in: response.body) {
    case "50011":
      return finding(
        .fails,
        "not registered for this app: Microsoft answered AADSTS50011 (the redirect URI does not match those "
          + "configured for the application), so a sign-in in the browser would end there",
        advice: "\(registration): add a platform, \"Mobile and desktop applications\", with the custom redirect URI "
          + "\(shown) (Microsoft ignores the port of localhost).")
    case "700016":
      return finding(
        .fails,
        "Microsoft does not know the app here (AADSTS700016: client id \(configuration.client.id) is not registered "
          + "in this tenant), so no sign-in can succeed",
        advice: "Check the client id (the app registration's Overview page, \"Application (client) ID\"), or use a "
          + "tenant where the app is registered (\"organizations\" or \"common\" for a multi-tenant app).")
    case "90002":
      return finding(
        .unknown, "not checked: Microsoft does not know the tenant (AADSTS90002)",
        advice: "Correct the tenant first; the redirect is checked once Microsoft knows it.")
    default:
      return finding(
        .unknown, "not checked: Microsoft's answer (HTTP \(response.status)) shows neither a redirect nor AADSTS50011",
        advice: "\(registration): check that \(shown) is listed under \"Mobile and desktop applications\".")
    }
  }

  /// AADSTS7000218 at the end of a device sign-in ("The request body must contain the
  /// following parameter: 'client_assertion' or 'client_secret'",
  /// https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes): the
  /// app is taken for a confidential client where its redirect cannot tell
  /// (`allowPublicClient`, "the fallback application type",
  /// https://learn.microsoft.com/en-us/entra/identity-platform/reference-app-manifest).
  private var publicClientFlows: RegistrationFinding {
    RegistrationFinding(
      aspect: "public-client-flows", subject: "Public client flows", verdict: .unknown, neededBy: .deviceSignIn,
      detail: "not checked: Microsoft tells whether the app allows them (\"Allow public client flows\") only when a "
        + "device sign-in is completed, which ends on AADSTS7000218 if not; no request that signs no one in shows it",
      advice: "\(registration), Advanced settings: \"Allow public client flows\" must be Yes for a sign-in with a "
        + "code (the app sends no secret).")
  }

  /// The first AADSTS number in an answer's body: Microsoft's error pages and JSON errors
  /// both carry it ("AADSTS50011: …").
  static func aadsts(in body: [UInt8]) -> String? {
    let marker = Array("AADSTS".utf8)
    let bytes = body.prefix(256 * 1024)
    guard bytes.count > marker.count,
      let start = bytes.indices.dropLast(marker.count).first(where: {
        bytes[$0..<$0 + marker.count].elementsEqual(marker)
      })
    else { return nil }
    let digits = bytes[(start + marker.count)...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    return digits.isEmpty ? nil : String(decoding: digits, as: UTF8.self)
  }
}

extension MicrosoftGraphBehavior {
  public func registrationFindings(
    _ configuration: ServiceConfiguration, transport: any HTTPTransport
  ) async
    -> [RegistrationFinding]
  {
    await MicrosoftRegistrationProbe(configuration: configuration, transport: transport).findings()
  }
}
