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
