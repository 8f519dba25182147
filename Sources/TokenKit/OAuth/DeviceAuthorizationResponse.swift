#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The device authorization response (RFC 8628 §3.2).
public struct DeviceAuthorizationResponse: Sendable, Hashable, CustomStringConvertible {
  /// `device_code`: a secret, polled with.
  public var deviceCode: String
  /// `user_code`: what the user types at the verification URI.
  public var userCode: String
  /// `verification_uri` (also accepted as `verification_url`, an early draft's name).
  public var verificationURI: String
  /// `verification_uri_complete`: the URI with the code filled in, when offered.
  public var verificationURIComplete: String?
  /// `expires_in`, seconds.
  public var expiresIn: Double
  /// `interval`, seconds between polls; 5 when absent (§3.2).
  public var interval: Double
  /// `message`: instructions some servers send for the user.
  public var message: String?

  /// Decodes a response body; the error says what is missing, never what is there.
  public init(json body: [UInt8]) throws(AuthorizationServiceError) {
    let object = try JSONObject(body, what: "device authorization response")
    guard let deviceCode = object.string("device_code"), let userCode = object.string("user_code"),
      let uri = object.string("verification_uri") ?? object.string("verification_url"),
      let expiresIn = object.seconds("expires_in")
    else {
      throw .malformedResponse(
        "the device authorization response lacks device_code, user_code, verification_uri or expires_in")
    }
    self.deviceCode = deviceCode
    self.userCode = userCode
    verificationURI = uri
    verificationURIComplete = object.string("verification_uri_complete")
    self.expiresIn = expiresIn
    interval = object.seconds("interval") ?? 5
    message = object.string("message")
  }

  public var description: String {
    "DeviceAuthorizationResponse(user_code: \(userCode), verification_uri: \(verificationURI), expires_in: \(Int(expiresIn)), interval: \(Int(interval)))"
  }
}
