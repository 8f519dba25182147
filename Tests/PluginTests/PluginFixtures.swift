import AccountTypeFiles
import BitbucketAccount
import Foundation
import GitHubAccount
import GitLabAccount
import GiteaAccount
import GoogleAccount
import TestSupport
import TokenKit

/// What the providers send, written from their documentation.
enum PluginFixtures {
  static func plugin(_ id: String) -> any AccountTypePlugin.Type {
    switch id {
    case "github": return GitHubPlugin.self
    case "gitlab": return GitLabPlugin.self
    case "google": return GooglePlugin.self
    case "bitbucket": return BitbucketPlugin.self
    case "gitea": return GiteaPlugin.self
    default: fatalError("no built-in plugin \(id) in these tests")
    }
  }

  /// The Gitea or Forgejo instance the tests sign in to; Gitea states its issuer with
  /// the trailing slash of its root URL.
  static let giteaIssuer = "https://code.example.org/"

  /// Google's discovery document, as served at
  /// `https://accounts.google.com/.well-known/openid-configuration` (abridged).
  static let googleDiscovery = """
    {
      "issuer": "https://accounts.google.com",
      "authorization_endpoint": "https://accounts.google.com/o/oauth2/v2/auth",
      "device_authorization_endpoint": "https://oauth2.googleapis.com/device/code",
      "token_endpoint": "https://oauth2.googleapis.com/token",
      "userinfo_endpoint": "https://openidconnect.googleapis.com/v1/userinfo",
      "revocation_endpoint": "https://oauth2.googleapis.com/revoke",
      "jwks_uri": "https://www.googleapis.com/oauth2/v3/certs",
      "response_types_supported": ["code", "token", "id_token", "code token", "code id_token", "none"],
      "subject_types_supported": ["public"],
      "id_token_signing_alg_values_supported": ["RS256"],
      "scopes_supported": ["openid", "email", "profile"],
      "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
      "code_challenge_methods_supported": ["plain", "S256"],
      "grant_types_supported": [
        "authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code",
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
      ]
    }
    """

  /// Forgejo's discovery document (`templates/user/auth/oidc_wellknown.tmpl`) for
  /// `giteaIssuer`.
  static let giteaDiscovery = """
    {
      "issuer": "https://code.example.org/",
      "authorization_endpoint": "https://code.example.org/login/oauth/authorize",
      "token_endpoint": "https://code.example.org/login/oauth/access_token",
      "jwks_uri": "https://code.example.org/login/oauth/keys",
      "userinfo_endpoint": "https://code.example.org/login/oauth/userinfo",
      "introspection_endpoint": "https://code.example.org/login/oauth/introspect",
      "response_types_supported": ["code", "id_token"],
      "id_token_signing_alg_values_supported": ["ES256"],
      "subject_types_supported": ["public"],
      "scopes_supported": ["openid", "profile", "email", "groups"],
      "code_challenge_methods_supported": ["plain", "S256"],
      "grant_types_supported": ["authorization_code", "refresh_token"]
    }
    """

  /// GitHub's token response (docs: "Authorizing OAuth apps", Accept: application/json).
  static let githubTokens =
    #"{"access_token":"gho_16C7e42F292c6912E7710c838347Ae178B4a","scope":"repo,gist","token_type":"bearer"}"#

  /// GitHub's answer to a used or expired code: an error, with HTTP 200.
  static let githubBadVerificationCode = #"""
    {"error":"bad_verification_code","error_description":"The code passed is incorrect or expired.","error_uri":"https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code"}
    """#

  /// `GET https://api.github.com/user` (abridged).
  static let githubUser =
    #"{"login":"octocat","id":583231,"node_id":"MDQ6VXNlcjU4MzIzMQ==","type":"User","name":"The Octocat"}"#

  /// Bitbucket's token response (docs: "OAuth 2.0", authorization code grant).
  static let bitbucketTokens = """
    {"access_token": "bb-access-1", "scopes": "account repository:write", "expires_in": 7200,
     "refresh_token": "bb-refresh-1", "token_type": "bearer", "state": "authorization_code"}
    """

  /// `GET https://api.bitbucket.org/2.0/user` (abridged).
  static let bitbucketUser = """
    {"type": "user", "uuid": "{e1a5b2c3-0000-4d4e-9f00-1234567890ab}", "username": "tutorials",
     "display_name": "tutorials account", "account_id": "557058:c0b72ad0-1cb5-4018-9cdc-0cde8492c443"}
    """

  /// An ID token from `issuer` for the nonce of the request the browser was shown.
  static func idToken(issuer: String, subject: String, nonce: String?, extra: [String: JSONValue]) -> String {
    var claims: [String: JSONValue] = [
      "iss": .string(issuer), "sub": .string(subject), "aud": .string(PluginHarness.clientID),
      "exp": .number(OAuthFixtures.now.timeIntervalSince1970 + 3600),
      "iat": .number(OAuthFixtures.now.timeIntervalSince1970),
    ]
    if let nonce { claims["nonce"] = .string(nonce) }
    claims.merge(extra) { $1 }
    return IDTokenSigner.sign(claims)
  }

  /// Every provider's endpoints at once: they are at distinct URLs. Token endpoints issue
  /// ID tokens carrying the nonce of the request `browser` was shown.
  static func providers(_ browser: ScriptedBrowser) -> ScriptedTransport.Handler {
    { request throws(TransportError) in
      let nonce = browser.request["nonce"]
      func oidcTokens(issuer: String, subject: String, extra: [String: JSONValue]) -> HTTPResponse {
        ScriptedTransport.tokens(
          access: "AT-\(subject)", refresh: "RT-\(subject)",
          idToken: idToken(issuer: issuer, subject: subject, nonce: nonce, extra: extra), expiresIn: 3599)
      }
      switch request.url.absoluteString {
      case "https://github.com/login/oauth/access_token":
        return ScriptedTransport.json(200, githubTokens)
      case "https://api.github.com/user":
        return ScriptedTransport.json(200, githubUser)
      case "https://bitbucket.org/site/oauth2/access_token":
        return ScriptedTransport.json(200, bitbucketTokens)
      case "https://api.bitbucket.org/2.0/user":
        return ScriptedTransport.json(200, bitbucketUser)
      case "https://gitlab.com/oauth/token":
        return oidcTokens(issuer: "https://gitlab.com", subject: "1234567", extra: ["preferred_username": "ada"])
      case "https://accounts.google.com/.well-known/openid-configuration":
        return ScriptedTransport.json(200, googleDiscovery)
      case "https://oauth2.googleapis.com/token":
        return oidcTokens(
          issuer: "https://accounts.google.com", subject: "110169484474386276334",
          extra: ["email": "ada@gmail.com", "email_verified": true])
      case "https://code.example.org/.well-known/openid-configuration":
        return ScriptedTransport.json(200, giteaDiscovery)
      case "https://code.example.org/login/oauth/access_token":
        return oidcTokens(issuer: giteaIssuer, subject: "7", extra: ["preferred_username": "ada"])
      case "https://gitlab.com/oauth/discovery/keys", "https://www.googleapis.com/oauth2/v3/certs",
        "https://code.example.org/login/oauth/keys":
        return ScriptedTransport.json(200, IDTokenSigner.jwks)
      default:
        return HTTPResponse(status: 404)
      }
    }
  }
}
