import ArgumentParser
import MicrosoftGraphAccount

extension TokenCtl.Graph {
  /// `tokenctl graph me`: the signed-in user's own profile.
  struct Me: AsyncParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(commandName: "me", abstract: "Show the signed-in user's profile.")

    @Flag(help: "Print JSON (with a format version) instead of key: value lines.")
    var json = false

    @OptionGroup var accountOption: GraphAccountOption

    func run() async throws {
      let session = try accountOption.session()
      let context = session.context
      let me = try await accountOption.client(in: session).client.me()
      if json {
        context.output.write(JSONOutput.render(GraphUserDocument(user: me)))
      } else {
        context.output.write(GraphUserDetail(user: me).render(style: Style(context: context)))
      }
    }
  }
}
