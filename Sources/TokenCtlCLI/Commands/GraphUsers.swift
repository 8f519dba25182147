import ArgumentParser

extension TokenCtl.Graph {
  /// `tokenctl graph users`: the walkthrough's search and detail views.
  struct Users: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "users",
      abstract: "Search the organisation's users, or show one.",
      subcommands: [Search.self, Show.self])
  }
}
