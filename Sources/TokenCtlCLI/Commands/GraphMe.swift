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
      let (context, graph, _) = try accountOption.open()
      GraphUserDetail.write(try await graph.me(), json: json, to: context)
    }
  }
}
