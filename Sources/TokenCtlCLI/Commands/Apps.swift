import ApplicationConsent
import ArgumentParser
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension TokenCtl {
  /// `tokenctl apps`: the applications allowed or denied, and when they last got a token.
  struct Apps: ParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "apps",
      abstract: "List the applications allowed or denied tokens, and when each last got one.",
      discussion: """
        One line per application and group: the accounts it may use ('all' for every \
        account of the group), whether it is allowed or denied, since when, and when the \
        agent last handed it a token (to the minute). Applications are executables, or \
        Flatpak apps by their app id (flatpak:APP_ID): a line for /usr/bin/python3.11 covers \
        every Python program you run outside a sandbox, one for flatpak:org.example.App \
        that app alone. Hosts the agent is forwarded to ('tokenctl ssh') are host:NAME, with \
        the accounts allowed them ('tokenctl allow --host'). tokenctl's own executables are \
        always allowed and are not listed.
        """)

    @Flag(help: "Print JSON (with a format version) instead of a table.")
    var json = false

    func run() throws {
      let context = CommandSession.runningContext()
      let entries = try context.applicationGrants().entries()
      if json {
        context.output.write(
          JSONOutput.render(ApplicationsDocument(applications: entries.map(ApplicationDocument.init))))
        return
      }
      guard !entries.isEmpty else {
        context.output.writeError("No application is allowed or denied; 'tokenctl allow' allows one.\n")
        return
      }
      let style = Style(context: context)
      let now = context.clock.now
      func ago(_ date: Date) -> String {
        "\(DurationText.format(seconds: Int(now.timeIntervalSince(date).rounded(.down)))) ago"
      }
      var table = Table(header: ["APPLICATION", "GROUP", "ACCOUNTS", "STATE", "SINCE", "LAST USE"])
      for entry in entries {
        let accounts: String
        let state: String
        switch entry.state {
        case .allowed(nil): (accounts, state) = ("all", "allowed")
        case .allowed(let granted?): (accounts, state) = (granted.map(\.name).joined(separator: ", "), "allowed")
        case .denied: (accounts, state) = ("-", "denied")
        }
        table.rows.append(
          [
            entry.application, entry.group ?? "all", accounts, state, ago(entry.since),
            entry.lastUse.map(ago) ?? "never",
          ]
          .map(TerminalSafe.text))
      }
      context.output.write(
        table.render(style: style) { row, column, text in
          guard column == 3 else { return text }
          return entries[row].state == .denied ? style.yellow(text) : style.green(text)
        })
    }
  }
}

struct ApplicationsDocument: Encodable {
  let format = JSONOutput.formatVersion
  var applications: [ApplicationDocument]
}

/// One grant or denial in `apps --json`.
struct ApplicationDocument: Encodable {
  struct GrantedAccountDocument: Encodable {
    var type: String
    var id: String
    var name: String
  }

  var application: String
  /// Null for a denial in every group.
  var group: String?
  var state: String
  /// True when every account of the group is allowed; `accounts` is then empty.
  var all_accounts: Bool
  var accounts: [GrantedAccountDocument]
  var since: String
  var last_use: String?

  init(_ grant: Grant) {
    application = grant.application
    group = grant.group
    switch grant.state {
    case .allowed(let granted):
      state = "allowed"
      all_accounts = granted == nil
      accounts = (granted ?? []).map { GrantedAccountDocument(type: $0.key.type, id: $0.key.id, name: $0.name) }
    case .denied:
      state = "denied"
      all_accounts = false
      accounts = []
    }
    since = JSONOutput.timestamp(grant.since)
    last_use = grant.lastUse.map(JSONOutput.timestamp)
  }
}
