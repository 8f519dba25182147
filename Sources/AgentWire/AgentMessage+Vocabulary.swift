/// The messages of version 1 (tokenctl-agent(1) lists them): what each kind carries, in
/// one place for the agent that writes them and the client that reads them.
extension AgentMessage {
  /// Request kinds, but those of the tools' credential helpers: each of those is built,
  /// with its fields and the answer it expects, by AgentFrontEnd's `ClientCommand`, and
  /// answered by the tool's `ToolCredentialProtocol` (CredentialHelpers).
  public enum Request {
    /// `group`, `account`, optional `min-valid` (seconds), optional `scopes` (a token for
    /// these scopes instead of the account's own, as `scope` is written: RFC 6749 §3.3);
    /// answered `token` or `error`.
    public static let token = "token"
    /// `group`, optional `type`; answered `accounts` or `error`.
    public static let list = "list"
    /// Answered `status`.
    public static let status = "status"
    /// `host` (the host name ssh connects to), from tokenctl's own programs only; answered
    /// `forwarding` with the `socket` the agent opened for that host, or `error`. The
    /// client keeps the connection open while the host may ask: when it closes, the agent
    /// removes that socket, and the host gets nothing more.
    public static let forward = "forward"
  }

  /// Answer kinds.
  public enum Answer {
    /// `access-token`, then `warning`s; and for a request with `scopes`, those `scopes`
    /// again, so that a client knows the agent heard them (an agent older than them does
    /// not echo them, and answered with the account's own token). `expires` (seconds since
    /// 1970, when known), `token-scopes` and `token-scopes-confirmed` (1, or 0 when they
    /// are only the ones asked for) describe the token, for `token --json`.
    public static let token = "token"
    /// An optional `answer` (git's response, serialized), then `warning`s.
    public static let credential = "credential"
    /// Account records, each starting at `type` (``accountRecords``).
    public static let accounts = "accounts"
    /// A `TokenKitError`: `code`, `message`, optional `recovery` and `remedy` (JSON).
    public static let error = "error"
    /// The agent will not answer this one; the client does it itself, as without an
    /// agent. `reason` says why, for the log.
    public static let direct = "direct"
    public static let status = "status"
    /// `socket`: the path of the socket the agent opened for a forwarded host.
    public static let forwarding = "forwarding"
    /// No fields: the answer is coming but slowly (the agent is refreshing). Sent before
    /// the answer, only to a request with `progress` 1 (``progressField``).
    public static let working = "working"
  }

  /// The field of the `status` a forwarded host's socket answers (and only it): the name
  /// the agent knows that host by. Its presence says the agent is forwarded over ssh.
  public static let forwardedHostField = "forwarded-host"

  /// The field of a request that says which program asks, as the client reports it (its
  /// name and the command that ran it). Anyone can write anything here: the agent knows
  /// a local client by its /proc entry and a forwarded host by its socket, and shows this
  /// only as what a forwarded host reports, quoted, in the prompt for that host.
  public static let reportedProgramField = "program"

  /// The field of a request whose client reads a `working` frame before its answer: it
  /// waits only a short while for a first frame, so that a wedged agent costs it little.
  public static let progressField = "progress"

  /// The environment variables that decide which files, directories and keyring a request
  /// means. A client sends its values as `env-NAME` fields (absent: unset); the agent
  /// answers as if it ran with them, and leaves a request whose session bus is not its
  /// own to the client.
  public static let contextVariables = [
    "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "TOKENCTL_CONFIG",
    "DBUS_SESSION_BUS_ADDRESS",
  ]

  /// The field carrying the context variable `name`.
  ///
  /// Byte by byte, for the ASCII names above: `lowercased()` and `replacing` would page in
  /// Unicode case tables and the regex engine's searchers in every client.
  public static func contextField(_ name: String) -> String {
    var field = Array("env-".utf8)
    for byte in name.utf8 {
      switch byte {
      case UInt8(ascii: "_"): field.append(UInt8(ascii: "-"))
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): field.append(byte + 32)
      default: field.append(byte)
      }
    }
    return String(decoding: field, as: UTF8.self)
  }

  /// The context variables a request carries.
  public var context: [String: String] {
    var context: [String: String] = [:]
    for name in Self.contextVariables {
      if let value = self[Self.contextField(name)] { context[name] = value }
    }
    return context
  }
}
