#if !hasFeature(Embedded)
  // Embedded, the front end is one module of these sources (Sources/tokenctl-front-end).
  import AgentWire
#endif

/// The command lines answered before swift-argument-parser runs, recognised as it would
/// parse them: by the front end from the agent, and by the full program's fast path and
/// shortcuts (`TokenCtl.Shortcut`), in this one place. `token ACCOUNT` with at most
/// `--min-valid N` and `--group G` (as separate words), `credential OPERATION` and
/// `docker-credential get` with at most `--group G`, `kube-credential` with at most
/// `--server URL` and `--group G`, and `--cargo-plugin` alone. Anything odder is not
/// taken, and goes to the parser.
///
/// `indirect`, one pointer: an optional of the enum laid out in place was copied and
/// destroyed through its generic metadata, which the front end looked up by name on every
/// start (10 K of its 362 K instructions, callgrind).
public indirect enum ClientCommand: Sendable, Equatable {
  case token(account: String, minValid: Int?, group: String?)
  /// `credential OPERATION`: git's helper (`get`, `store`, `erase`, or anything, which the
  /// command answers as git asks: nothing); only `get` asks the agent.
  case credential(operation: String, group: String?)
  /// `docker-credential get`: Docker's helper, asked as git's with the registry's URL.
  case dockerGet(group: String?)
  /// `kube-credential` with at most `--server URL`: kubectl's exec credential plugin.
  case kubeCredential(server: String?, group: String?)

  /// `--cargo-plugin` alone, as cargo runs its credential providers.
  case cargoPlugin

  /// The flag cargo runs a credential provider with.
  public static let cargoPluginFlag = "--cargo-plugin"

  /// The name of kubectl's plugin command.
  public static let kubeCredentialName = "kube-credential"

  /// The name of the command `docker-credential-tokenctl` runs.
  public static let dockerCredentialName = "docker-credential"

  /// Whether `token`'s ACCOUNT is a URL (it holds `://`), which names no account: the
  /// direct path chooses one for it, as the helpers would. On bytes, as `dockerServer`:
  /// `String.contains(_:)` of a string is _StringProcessing's, 0.2 MiB paged in at start.
  public static func namesURL(_ account: String) -> Bool {
    let bytes = Array(account.utf8)
    guard bytes.count >= 3 else { return false }
    let colon = UInt8(ascii: ":"), slash = UInt8(ascii: "/")
    return (0...(bytes.count - 3)).contains { bytes[$0] == colon && bytes[$0 + 1] == slash && bytes[$0 + 2] == slash }
  }

  /// The registry Docker's `get` names on standard input, without the white space and
  /// line break around it. On bytes: the front end and the full program's fast path read
  /// it, where grapheme breaking would page in tables.
  public static func dockerServer(_ input: [UInt8]) -> String {
    let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d }
    guard let first = input.firstIndex(where: { !isSpace($0) }), let last = input.lastIndex(where: { !isSpace($0) })
    else { return "" }
    return String(decoding: input[first...last], as: UTF8.self)
  }

  public var group: String? {
    switch self {
    case .token(_, _, let group), .credential(_, let group), .dockerGet(let group), .kubeCredential(_, let group):
      group
    case .cargoPlugin: nil
    }
  }

  public init?(_ arguments: [String]) {
    guard let name = arguments.first else { return nil }
    if arguments == [Self.cargoPluginFlag] {
      self = .cargoPlugin
      return
    }
    var account: String?
    var minValid: Int?
    var group: String?
    var operation: String?
    var server: String?
    var index = 1
    while index < arguments.count {
      let word = arguments[index]
      switch word {
      case "--group", "--min-valid", "--server":
        // Each once, with a plain value: anything odder is the parser's to judge.
        guard index + 1 < arguments.count else { return nil }
        let value = arguments[index + 1]
        guard !value.isEmpty, !value.hasPrefix("-") else { return nil }
        if word == "--group" {
          guard group == nil else { return nil }
          group = value
        } else if word == "--server" {
          guard name == Self.kubeCredentialName, server == nil else { return nil }
          server = value
        } else {
          guard name == "token", minValid == nil, value.utf8.count <= 9,
            value.utf8.allSatisfy({ (48...57).contains($0) }),
            let number = Int(value)
          else { return nil }
          minValid = number
        }
        index += 2
      default:
        guard !word.isEmpty, !word.hasPrefix("-"), word != "help", account == nil, operation == nil else {
          return nil
        }
        if name == "token" { account = word } else { operation = word }
        index += 1
      }
    }
    switch name {
    case "token":
      // A URL names no account the agent knows: the direct path chooses one for it.
      guard let account, !Self.namesURL(account) else { return nil }
      self = .token(account: account, minValid: minValid, group: group)
    case "credential":
      guard let operation else { return nil }
      self = .credential(operation: operation, group: group)
    case Self.dockerCredentialName:
      guard operation == "get" else { return nil }
      self = .dockerGet(group: group)
    case Self.kubeCredentialName:
      guard operation == nil else { return nil }
      self = .kubeCredential(server: server, group: group)
    default: return nil
    }
  }
}

/// Each command's request to the agent and the answer it expects (tokenctl-agent(1)), in
/// the one place the front end and the full program both build and judge them: what the
/// agent reads of a tool's request is that tool's `ToolCredentialProtocol` (CredentialHelpers),
/// which the front end does not link; a test checks that every request here is one the
/// agent answers, with the fields it reads.
extension ClientCommand {
  /// A request's kind and its own fields; the `group`, context and program fields every
  /// request carries are ``AgentAsk``'s.
  public struct AgentRequest: Sendable, Equatable {
    public var kind: String
    public var fields: [AgentMessage.Field]
  }

  /// What the command prints of a full answer, and its exit status.
  public struct Printed: Sendable, Equatable {
    public var text: String
    public var status: Int32
  }

  /// What kubectl passes its exec plugin's request in: `ExecCredential.variable`, which the
  /// front end does not link (a test checks the two agree).
  public static let kubeExecInfoVariable = "KUBERNETES_EXEC_INFO"

  /// What Docker's clients match to tell "no credentials" from a failure:
  /// `DockerCredentials.notFound`, which the front end does not link (a test checks the two
  /// agree).
  public static let dockerNotFound = "credentials not found in native keychain"

  /// Whether the command reads the tool's request from standard input before it asks: git's
  /// and Docker's `get`. cargo's lines are read one by one, each its own request.
  public var readsRequest: Bool {
    switch self {
    case .credential("get", _), .dockerGet: true
    default: false
    }
  }

  /// The request for this command: `input` is what it read (standard input when
  /// ``readsRequest``, one line of cargo's for `--cargo-plugin`), `variable` the
  /// environment. nil when the agent is not asked: git's operations but `get`, and a request
  /// of git's that is not to leave the process (``CredentialInput``).
  ///
  /// - `token`: `account`, optional `min-valid` (seconds); answered `token` or `error`.
  /// - `credential-get`: `input` (the lines of git's request the agent reads), optional
  ///   `account` (`TOKENCTL_ACCOUNT`); answered `credential`, whose `answer` is git's.
  /// - `docker-get`: `server` (the registry Docker's `get` names, as the tool wrote it),
  ///   optional `account`; answered `credential`, whose `answer` is Docker's JSON line
  ///   (absent: no account serves the registry).
  /// - `kube-get`: optional `server` (the plugin's `--server`), optional `exec-info` (what
  ///   kubectl passed in ``kubeExecInfoVariable``), optional `account`; answered
  ///   `credential`, whose `answer` is the ExecCredential's JSON line (absent: no account
  ///   serves the API server).
  /// - `cargo-get`: `input` (one request line of cargo's credential provider protocol),
  ///   optional `account`; answered `credential`, whose `answer` is the response line, for a
  ///   `get` of version 1; anything else is answered `direct`.
  ///
  /// Any of them may be answered `error`, or `direct` (the client does it itself).
  ///
  /// Inlined: the front end then builds a token's request in place, without an array of
  /// its own to allocate and copy.
  @inline(__always)
  public func agentRequest(input: [UInt8], _ variable: (String) -> String?) -> AgentRequest? {
    var request: AgentRequest
    switch self {
    case .token(let account, let minValid, _):
      request = AgentRequest(kind: AgentMessage.Request.token, fields: [.init("account", account)])
      if let minValid { request.fields.append(.init("min-valid", "\(minValid)")) }
      return request
    case .credential("get", _):
      guard let text = CredentialInput.forAgent(input) else { return nil }
      request = AgentRequest(kind: "credential-get", fields: [.init("input", text)])
    case .credential: return nil
    case .dockerGet:
      request = AgentRequest(kind: "docker-get", fields: [.init("server", Self.dockerServer(input))])
    case .kubeCredential(let server, _):
      request = AgentRequest(kind: "kube-get", fields: [])
      if let server { request.fields.append(.init("server", server)) }
      if let info = variable(Self.kubeExecInfoVariable) { request.fields.append(.init("exec-info", info)) }
    case .cargoPlugin:
      guard let text = String(validating: input, as: UTF8.self) else { return nil }
      request = AgentRequest(kind: "cargo-get", fields: [.init("input", text)])
    }
    if let account = variable("TOKENCTL_ACCOUNT") { request.fields.append(.init("account", account)) }
    return request
  }

  /// What the command prints for the agent's `answer`, warnings aside (they are the
  /// caller's); nil when it is no full answer of this command's, which the full program
  /// reports in its words: an error, `direct`, an answer of another kind, a token for other
  /// scopes than the account's, or kubectl's or cargo's `get` that no account answers.
  @inline(__always)
  public func output(for answer: AgentMessage) -> Printed? {
    switch self {
    case .token:
      guard answer.kind == AgentMessage.Answer.token, answer["scopes"] == nil, let token = answer["access-token"]
      else { return nil }
      return Printed(text: token + "\n", status: 0)
    case .credential:
      // Nothing printed: git goes on to its next helper.
      guard answer.kind == AgentMessage.Answer.credential else { return nil }
      return Printed(text: answer["answer"] ?? "", status: 0)
    case .dockerGet:
      guard answer.kind == AgentMessage.Answer.credential else { return nil }
      guard let json = answer["answer"] else { return Printed(text: Self.dockerNotFound + "\n", status: 1) }
      return Printed(text: json, status: 0)
    case .kubeCredential, .cargoPlugin:
      guard answer.kind == AgentMessage.Answer.credential, let text = answer["answer"] else { return nil }
      return Printed(text: text, status: 0)
    }
  }
}
