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

        The delegated permissions each needs: `users search` and `users show`, \
        User.ReadBasic.All; `me`, User.Read (both asked for at sign-in); `revoke-sessions`, \
        User.RevokeSessions.All, asked for that one call. An account keeps to the tenant it \
        signed in at; a guest account is named with its tenant's id (user@home/TENANT-ID). \
        tokenctl-providers(7) says what else a Microsoft user needs.
        """,
      subcommands: [Users.self, Me.self, RevokeSessions.self])
  }
}
