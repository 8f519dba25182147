import ArgumentParser
import MicrosoftGraphAccount
import TokenKit

extension TokenCtl.Graph.Users {
  /// `tokenctl graph users search`: the walkthrough's search view.
  struct Search: AsyncParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "search",
      abstract: "List the users whose given name (or another property) starts with PREFIX.",
      discussion: """
        Asks Graph for `startswith(PROPERTY,'PREFIX')`, following its next-page links (on \
        the Graph host only) until --top users are found. Needs the User.ReadBasic.All \
        permission, which `tokenctl login graph` requests. With --json the users are \
        printed with Graph's own property names.
        """)

    @Argument(help: ArgumentHelp("The start of the name to look for (not case-sensitive).", valueName: "prefix"))
    var prefix: String

    @Option(help: ArgumentHelp("The property to match.", valueName: "property"))
    var by: GraphUserFilter.Field = .givenName

    @Option(help: ArgumentHelp("The most users to list.", valueName: "n"))
    var top = 25

    @Flag(help: "Print JSON (with a format version) instead of a table.")
    var json = false

    @OptionGroup var accountOption: GraphAccountOption

    func validate() throws {
      if prefix.isEmpty { throw ValidationError("Give the start of a name to search for.") }
      if top < 1 { throw ValidationError("--top must be 1 or more.") }
    }

    func run() async throws {
      let (context, graph, _) = try accountOption.open()
      let result = try await graph.searchUsers(GraphUserFilter(field: by, prefix: prefix), limit: top)
      if let link = result.refusedNextLink {
        context.output.writeError(
          TerminalSafe.text(
            "tokenctl: Graph's next page is on \(link.host() ?? "another host"), not \(graph.base.host() ?? "Graph");"
              + " not followed, so the list may be incomplete.") + "\n")
      }
      if json {
        context.output.write(JSONOutput.render(GraphUsersDocument(users: result.users, more: result.hasMore)))
        return
      }
      guard !result.users.isEmpty else {
        context.output.writeError(TerminalSafe.text("No users match '\(prefix)'.") + "\n")
        return
      }
      var table = Table(header: ["NAME", "UPN", "MAIL", "PHONES"])
      for user in result.users {
        let name = user.displayName ?? [user.givenName, user.surname].compactMap { $0 }.joined(separator: " ")
        table.rows.append(
          [name, user.userPrincipalName ?? "", user.mail ?? "", user.phones.joined(separator: ", ")].map(
            TerminalSafe.text))
      }
      context.output.write(table.render(style: Style(context: context)))
      if result.hasMore {
        context.output.writeError("More users match; raise --top (now \(top)) or give a longer prefix.\n")
      }
    }
  }
}

extension GraphUserFilter.Field: ExpressibleByArgument {}

/// `graph users search --json`.
struct GraphUsersDocument: Encodable {
  let format = JSONOutput.formatVersion
  var users: [GraphUser]
  /// Whether Graph had more matches than --top.
  var more: Bool
}
