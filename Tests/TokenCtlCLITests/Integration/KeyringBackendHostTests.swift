import CredentialHelpers
import Foundation
import TestSupport
import Testing

/// Whenever tokenctl would answer a keyring request, the host it chose the account for is
/// the host the tool then sends the token to.
///
/// The Python keyring backend (`Python/keyring-tokenctl`) turns what pip, urllib3 or
/// Mercurial ask into a request for `git-credential-tokenctl`, which chooses the account by
/// the host it reads in the request's `url`. Two readers of one URL that disagree on its
/// host send one host's token to another. So hostile URLs (`host_agreement_cases.py`) go
/// through each tool's own code, which says where it connects, and through the backend's
/// own key splitting, which gives the helper's exact input; that input is read here by the
/// helper's own reader (``CredentialMessage/parse(_:)``, ``CredentialRequest``). Debian's
/// python3 runs the Python side, with Mercurial, mercurial_keyring and pip's vendored
/// requests and urllib3, the backend from its source folder.
@Suite struct KeyringBackendHostTests {
  static let python = "/usr/bin/python3"
  static let backend = AuthServer.path("Python/keyring-tokenctl")
  static let hasTools =
    MercurialKeyringTests.hasMercurial
    && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/pip/_vendor/urllib3/__init__.py")

  /// One case: where the tool connects, and what the backend writes to the helper.
  struct Case: Decodable {
    var tool: String
    var url: String
    var service: String
    var username: String?
    var request: String?
    var scheme: String
    var host: String
    var port: Int
  }

  /// The backend's key splitting, and what it writes to the helper, by its own unit tests.
  @Test(.enabled(if: hasTools, "Debian's python3 with mercurial-keyring and pip (make deps installs them)"))
  func theBackendsOwnTestsPass() async throws {
    let run = try await TestProcess.run(
      Self.python, ["-m", "unittest", "discover", "--start-directory", Self.backend + "/tests"],
      environment: Self.environment)
    #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
    #expect(run.stderr.contains("\nOK"), "\(run.stderr)")
  }

  @Test(.enabled(if: hasTools, "Debian's python3 with mercurial-keyring and pip (make deps installs them)"))
  func whenTheHelperWouldAnswerItNamesTheHostTheToolSendsTo() async throws {
    let run = try await TestProcess.run(
      Self.python, [Self.backend + "/tests/host_agreement_cases.py", "--count", "3000", "--seed", "1"],
      environment: Self.environment)
    try #require(run.status == 0, "\(run.stderr)")
    let cases = try run.stdout.split(separator: "\n").map {
      try JSONDecoder().decode(Case.self, from: Data($0.utf8))
    }
    // Enough of each tool that the check means something: most random URLs are refused.
    for tool in ["urllib3", "pip", "hg"] { #expect(cases.filter { $0.tool == tool }.count > 500, "\(tool)") }
    var answered = 0
    var mismatches: [String] = []
    for found in cases {
      guard let request = found.request, let named = Self.hostTheHelperChoosesFor(request) else { continue }
      answered += 1
      // A host named without a port is the port the tool's scheme connects to.
      let chosen = Destination(host: named.host, port: named.port ?? (found.scheme == "https" ? "443" : "80"))
      let sent = Destination(host: found.host, port: String(found.port))
      if chosen != sent {
        mismatches.append(
          "\(found.tool) \(found.url): tokenctl chooses for \(chosen), \(found.tool) sends to \(sent) "
            + "(keyring asked \(found.service) / \(found.username ?? "no user"))")
      }
    }
    #expect(
      mismatches.isEmpty, "\(mismatches.count) of \(answered):\n\(mismatches.prefix(20).joined(separator: "\n"))")
    #expect(answered > 300, "too few cases the helper would answer: \(answered)")
  }

  static var environment: [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["PYTHONDONTWRITEBYTECODE"] = "1"
    environment["PYTHONPATH"] = nil
    environment["HGRCPATH"] = ""
    return environment
  }

  /// Where a token goes, as the check compares it: the host, in lowercase and without IPv6
  /// brackets, and the port.
  ///
  /// The scheme is not compared: a bare host (`pypi.example.org`, as pip also asks) is
  /// https to tokenctl and whatever the tool's URL says to the tool, and which hosts get
  /// plain http is the chooser's rule, not this reading's.
  struct Destination: Equatable, CustomStringConvertible {
    var host: String
    var port: String

    init(host: String, port: String) {
      var name = Substring(host)
      if name.hasPrefix("["), name.hasSuffix("]") { name = name.dropFirst().dropLast() }
      self.host = name.lowercased()
      self.port = port
    }

    var description: String { "\(host) port \(port)" }
  }

  /// The host, and the port if one is named, of the account the helper would choose for
  /// `request` (the backend's input to it), read by the helper's own code; nil when no
  /// account could answer it.
  static func hostTheHelperChoosesFor(_ request: String) -> (host: String, port: String?)? {
    guard let message = try? CredentialMessage.parse(Array(request.utf8)), let read = CredentialRequest(message),
      ["http", "https"].contains(read.scheme),
      // A host a type may list (tokenctl-types(5): printable ASCII, no `/`); the chooser
      // compares the request's host with those, so any other host is never answered.
      !read.host.isEmpty, read.host.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "/") })
    else { return nil }
    var host = Substring(read.host)
    var port: Substring?
    if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
      let rest = host[host.index(after: close)...]
      host = host[...close]
      // Anything but `:PORT` after the bracket is no port a tool would read.
      if !rest.isEmpty { port = rest.hasPrefix(":") ? rest.dropFirst() : rest }
    } else if let colon = host.firstIndex(of: ":"), host.lastIndex(of: ":") == colon {
      port = host[host.index(after: colon)...]
      host = host[..<colon]
    }
    // An empty port is the scheme's, and a padded one (`0080`) the number, as the tools
    // read them; anything else stays as written, and matches no tool's port.
    guard let port, !port.isEmpty else { return (String(host), nil) }
    if port.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(port) { return (String(host), String(value)) }
    return (String(host), String(port))
  }
}
