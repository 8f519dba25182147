import ArgumentParser

extension TokenCtl {
  /// `tokenctl graph`: the walkthrough's app, searching the organisation's users through
  /// Microsoft Graph with a signed-in account.
  struct Graph: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "graph",
      abstract: "Search the organisation's users and read profiles through Microsoft Graph.",
      discussion: """
        The app of Microsoft's Azure AD v2.0 walkthrough on the command line: sign in with \
        `tokenctl login graph`, then search users by the start of a name and show one in \
        detail. Every subcommand uses the group's only graph account unless --account \
        names one. Throttled requests (HTTP 429) are retried after the time Graph asks \
        for; an expired or rejected token is refreshed once.
        """,
      subcommands: [Users.self, Me.self, RevokeSessions.self])
  }
}
