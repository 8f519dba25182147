import MicrosoftGraphAccount

/// The walkthrough's detail view as `key: value` lines, one property per line; a
/// property Graph did not send is left out.
struct GraphUserDetail {
  var user: GraphUser

  var lines: [(key: String, value: String)] {
    let all: [(String, String?)] = [
      ("Name", user.displayName),
      ("Given name", user.givenName),
      ("Surname", user.surname),
      ("User principal name", user.userPrincipalName),
      ("Mail", user.mail),
      ("Business phones", user.businessPhones.isEmpty ? nil : user.businessPhones.joined(separator: ", ")),
      ("Mobile phone", user.mobilePhone),
      ("Job title", user.jobTitle),
      ("Office", user.officeLocation),
      ("Id", user.id),
    ]
    return all.compactMap { key, value in value.map { (key, $0) } }
  }

  /// Writes `user` as `graph me` and `graph users show` print it: the JSON document, or
  /// the lines.
  static func write(_ user: GraphUser, json: Bool, to context: CLIContext) {
    if json {
      context.output.write(JSONOutput.render(GraphUserDocument(user: user)))
    } else {
      context.output.write(GraphUserDetail(user: user).render(style: Style(context: context)))
    }
  }

  /// The lines, values aligned and made safe for the terminal.
  func render(style: Style) -> String {
    let width = (lines.map(\.key.count).max() ?? 0) + 2
    return lines.map { key, value in
      style.bold(key + ":") + String(repeating: " ", count: width - key.count - 1) + TerminalSafe.text(value) + "\n"
    }.joined()
  }
}

/// `graph users show --json` and `graph me --json`.
struct GraphUserDocument: Encodable {
  let format = JSONOutput.formatVersion
  var user: GraphUser
}
