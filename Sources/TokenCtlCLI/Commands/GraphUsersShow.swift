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
      let session = try accountOption.session()
      let context = session.context
      let found = try await accountOption.client(in: session).client.user(user)
      if json {
        context.output.write(JSONOutput.render(GraphUserDocument(user: found)))
      } else {
        context.output.write(GraphUserDetail(user: found).render(style: Style(context: context)))
      }
    }
  }
}
