import ArgumentParser
import MicrosoftGraphAccount

extension TokenCtl.Graph.Users {
  /// `tokenctl graph users show`: the walkthrough's detail view.
  struct Show: AsyncParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "show",
      abstract: "Show one user's profile, by id or user principal name.")

    @Argument(help: ArgumentHelp("The user's id or user principal name (ada@contoso.com).", valueName: "user"))
    var user: String

    @Flag(help: "Print JSON (with a format version) instead of key: value lines.")
    var json = false

    @OptionGroup var accountOption: GraphAccountOption

    func validate() throws {
      if user.isEmpty { throw ValidationError("Name a user by id or user principal name.") }
    }

    func run() async throws {
      let (context, graph, _) = try accountOption.open()
      GraphUserDetail.write(try await graph.user(user), json: json, to: context)
    }
  }
}
