/// A scheme and host for which the helper answers git, as a git configuration key names
/// it: `credential.https://git.example.org.helper`.
///
/// Which schemes a host gets is the chooser's rule 1 (``CredentialAccountChooser``), asked
/// through ``CredentialAccountChooser/serves(_:accounts:)``: https for every host a type
/// serves, and plain http too where the helper answers it, a loopback host whose
/// authorization server is on this machine as well.
public struct GitServedURL: Sendable, Hashable, CustomStringConvertible {
  /// `https` or `http`.
  public var scheme: String
  /// The host as git names it, lowercased, with the port when there is one.
  public var host: String

  public init(scheme: String, host: String) {
    self.scheme = scheme.lowercased()
    self.host = host.lowercased()
  }

  /// `https://git.example.org`: the URL in the configuration key, and what git matches a
  /// remote's URL against (gitcredentials(7), "Credential contexts").
  public var description: String { "\(scheme)://\(host)" }

  /// Every URL the helper may ever answer for `host`, whatever the types say today: https,
  /// and http for a loopback host. What `setup-git --unset` clears.
  public static func everyURL(of host: String) -> [GitServedURL] {
    [GitServedURL(scheme: "https", host: host)]
      + (GitHost.isLoopback(host.lowercased()) ? [GitServedURL(scheme: "http", host: host)] : [])
  }

  /// The request git sends for a remote at this URL.
  var request: CredentialRequest { CredentialRequest(scheme: scheme, host: host) }
}
