import AccountTypeFiles
import ArgumentParser
import TokenKit

extension TokenCtl {
  /// `tokenctl types`: the registered account types.
  struct Types: ParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "types",
      abstract: "List the account types tokenctl knows and their endpoints.")

    @Flag(help: "Print JSON (with a format version) instead of text.")
    var json = false

    @Flag(help: "Check account type files (tokenctl-types(5)) instead of listing the types.")
    var check = false

    @Argument(
      help: ArgumentHelp("The account type files to check.", valueName: "file"), completion: .file(extensions: ["toml"])
    )
    var files: [String] = []

    func validate() throws {
      if check, files.isEmpty { throw ValidationError("--check needs at least one file") }
      if !check, !files.isEmpty { throw ValidationError("files are only given with --check") }
      if check, json { throw ValidationError("--check prints text only") }
    }

    func run() throws {
      let context = CommandSession.runningContext()
      if check {
        let results = files.map { TypeFileCheck(path: $0, registry: context.registry) }
        context.output.write(results.map(\.report).joined())
        // The same status as any other unusable configuration.
        if results.contains(where: { !$0.isValid }) { throw ExitCode(ExitStatus.notConfigured.rawValue) }
        return
      }
      // The types as commands use them: with config.toml's client ids, issuers and scopes.
      let entries = try context.registry.applying(try Configuration.load(environment: context.environment).types).all
      if json {
        context.output.write(JSONOutput.render(TypesDocument(types: entries.map(TypeDocument.init))))
        return
      }
      let style = Style(context: context)
      context.output.write(entries.map { describe($0, style: style) }.joined(separator: "\n"))
    }

    private func describe(_ entry: AccountTypeRegistry.Entry, style: Style) -> String {
      let descriptor = entry.descriptor
      var fields = [("source", entry.source)]
      switch descriptor.endpoints {
      case .fixed(let endpoints):
        for (name, url) in endpoints.named {
          // `token_endpoint` reads "token"; `jwks_uri`, the one name without the suffix,
          // keeps its own words.
          let words = name.hasSuffix("_endpoint") ? name.dropLast("_endpoint".count) : Substring(name)
          fields.append((words.split(separator: "_").joined(separator: " "), url.absoluteString))
        }
      case .discovered(let issuer):
        fields.append(("issuer", "\(issuer.absoluteString) (endpoints discovered)"))
      case .discoveredFromUserIssuer:
        fields.append(("issuer", "given at sign-in (endpoints discovered)"))
      }
      fields += [
        (
          "scopes",
          descriptor.defaultScopes.isEmpty
            ? "none named (a sign-in asks for \(descriptor.signInScopes.joined(separator: " ")))"
            : descriptor.defaultScopes.joined(separator: " ")
        ),
        ("redirect", descriptor.redirect.summary),
        ("client auth", descriptor.tokenEndpointAuthentication.rawValue),
        ("client id", descriptor.clientID ?? "not configured"),
      ]
      if let git = descriptor.git {
        fields.append(("git hosts", "\(git.hosts.joined(separator: " ")) (username \(git.username))"))
      }
      let width = fields.map(\.0.count).max()! + 2
      let lines = fields.map { label, value in "  " + (label + ":").padding(width) + value }
      return (["\(style.bold(descriptor.id))  \(descriptor.displayName)"] + lines).joined(separator: "\n") + "\n"
    }
  }
}

extension String {
  func padding(_ width: Int) -> String {
    count >= width ? self + " " : self + String(repeating: " ", count: width - count)
  }
}

struct TypesDocument: Encodable {
  let format = JSONOutput.formatVersion
  var types: [TypeDocument]
}

/// One account type in `types --json`. The client secret is never shown, only whether
/// there is one.
struct TypeDocument: Encodable {
  var id: String
  var display_name: String
  var source: String
  var issuer: String?
  var issuer_from_user: Bool
  var endpoints: [String: String]
  var default_scopes: [String]
  var redirect: String
  var token_endpoint_auth_method: String
  var client_id: String?
  var has_client_secret: Bool
  var authorization_parameters: [String: String]
  var git_hosts: [String]
  var git_username: String?

  init(_ entry: AccountTypeRegistry.Entry) {
    let descriptor = entry.descriptor
    id = descriptor.id
    display_name = descriptor.displayName
    source = entry.source
    switch descriptor.endpoints {
    case .fixed(let fixed):
      endpoints = Dictionary(uniqueKeysWithValues: fixed.named.map { ($0.name, $0.url.absoluteString) })
      issuer_from_user = false
    case .discovered(let url):
      issuer = url.absoluteString
      endpoints = [:]
      issuer_from_user = false
    case .discoveredFromUserIssuer:
      endpoints = [:]
      issuer_from_user = true
    }
    default_scopes = descriptor.defaultScopes
    redirect = descriptor.redirect.summary
    token_endpoint_auth_method = descriptor.tokenEndpointAuthentication.rawValue
    client_id = descriptor.clientID
    has_client_secret = descriptor.clientSecret != nil
    authorization_parameters = descriptor.additionalAuthorizationParameters
    git_hosts = descriptor.git?.hosts ?? []
    git_username = descriptor.git?.username.description
  }
}
