import Foundation
import TestSupport
import Testing

/// App registrations set up wrong, each told what to change and where.
extension GraphIdentityPlatformTests {
  @Test func aSinglePageRegistrationIsToldToRegisterAMobileAndDesktopRedirect() async throws {
    try configure(clientID: platform.client("spa").id)
    let login = try await tokenctl("login", "graph", "--browser")
    #expect(login.status != 0, "\(login.stdout)")
    #expect(login.stderr.contains("AADSTS9002327"), "\(login.stderr)")
    #expect(login.stderr.contains("\"Mobile and desktop applications\""), "\(login.stderr)")
    #expect(try await tokenctl("list").stdout.split(separator: "\n").count <= 1, "nothing stored")
  }

  @Test func aDisabledAppIsToldWhoCanEnableItAndNotToCheckASecret() async throws {
    try configure(clientID: platform.client("disabled").id)
    let login = try await tokenctl("login", "graph", "--device")
    #expect(login.status != 0, "\(login.stdout)")
    #expect(login.stderr.contains("disabled in its tenant"), "\(login.stderr)")
    #expect(login.stderr.contains("administrator"), "\(login.stderr)")
    #expect(!login.stderr.lowercased().contains("secret"), "the graph type has no secret: \(login.stderr)")
  }
}
