import AccountTypeFiles
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The user's settings as checks: config.toml, the account type files, and a client id
/// for each type in use. The files are judged by the loaders the commands use, so the
/// rules (what is valid, which owner and mode are safe) and their wording are theirs.
enum SettingsChecks {
  static func configuration(_ inventory: DoctorInventory) -> DoctorCheck {
    let path = inventory.configurationPath
    let title = "config.toml"
    guard let error = inventory.configurationError else {
      guard access(path, F_OK) == 0 else {
        return .ok("config", title, "\(path) does not exist: every type uses its defaults")
      }
      let count = inventory.configuration?.types.count ?? 0
      return .ok(
        "config", title,
        "\(path) is valid, its owner and mode safe (\(count) account type\(count == 1 ? "" : "s") configured)")
    }
    return .fail(
      "config", title, error.message,
      fix: RemedyWording.recovery(for: error)
        ?? "Correct \(path) at the place shown; tokenctl-config(5) describes what it holds.")
  }

  /// Every file in the type directories, as `tokenctl types --check` judges it.
  static func typeFiles(_ inventory: DoctorInventory) -> DoctorCheck {
    let title = "Account type files"
    let directories = UserTypes.directories(environment: inventory.context.environment)
    var checked: [TypeFileCheck] = []
    var problems: [String] = []
    var fixes: [String] = []
    for directory in directories {
      do {
        checked += try UserTypes.descriptorFiles(in: directory).map {
          TypeFileCheck(path: $0, registry: inventory.registry)
        }
      } catch {
        problems.append("\(directory): \(error.message)")
        fixes.append("Make \(directory) readable, or remove it.")
      }
    }
    for file in checked where !file.isValid {
      if let refusal = file.refusal {
        problems.append(refusal.message)
        fixes.append(RemedyWording.recovery(for: refusal) ?? "Fix or remove \(file.path).")
      } else {
        problems += file.problems
        fixes.append(
          "Correct \(file.path) at the places shown (tokenctl-types(5)), then check it with "
            + "`tokenctl types --check \(file.path)`; or remove it.")
      }
    }
    guard problems.isEmpty else {
      return .fail(
        "type-files", title,
        problems.joined(separator: "\n") + "\nA file with a problem is skipped: its type is missing.",
        fix: fixes.joined(separator: "\n"))
    }
    guard !checked.isEmpty else {
      return .ok("type-files", title, "none (looked in \(directories.joined(separator: ", ")))")
    }
    return .ok(
      "type-files", title,
      checked.map { "\($0.path): valid (type \($0.id ?? "?"))" }.joined(separator: "\n"))
  }

  /// A client id for each type in use. A type that discovers its endpoints may register
  /// itself at the first sign-in when its issuer offers dynamic client registration
  /// (RFC 7591), so its missing client id is a warning; any other type cannot sign in.
  static func clientIDs(_ inventory: DoctorInventory) -> [DoctorCheck] {
    // Without config.toml's settings every type would look unconfigured: its own check
    // says what is wrong with it.
    guard inventory.configurationError == nil else { return [] }
    return inventory.typesInUse.map { entry in
      let descriptor = entry.descriptor
      let id = "client-id:\(descriptor.id)"
      let title = "Client id of \(descriptor.id)"
      if let clientID = descriptor.clientID, !clientID.isEmpty {
        let source = inventory.configuration?.types[descriptor.id]?.clientID != nil ? "config.toml" : entry.source
        return .ok(id, title, "configured (\(source))")
      }
      let line = """
          [types.\(descriptor.id)]
          client_id = "…"
        """
      let manual =
        "register an application with the provider (tokenctl-providers(7)) and add to "
        + "\(inventory.configurationPath):\n\(line)"
      let accounts = inventory.accounts(ofType: descriptor.id)
      if descriptor.dynamicRegistration {
        // The issuers this type signs in at: its own, else its accounts'.
        var issuers = accounts.compactMap(\.issuer)
        if case .discovered(let issuer) = descriptor.endpoints { issuers.insert(issuer.absoluteString, at: 0) }
        if inventory.accounts != nil,
          let registration = issuers.lazy.compactMap({ try? inventory.context.registrations.load(issuer: $0) }).first
        {
          return .ok(
            id, title,
            "client \(registration.clientID), registered at \(registration.issuer) (RFC 7591; "
              + "`tokenctl unregister \(registration.issuer)` deletes it)")
        }
        // Accounts signed in with --client-id work with the client they were issued to,
        // and `login ACCOUNT` signs them in again with it.
        if !accounts.isEmpty, accounts.allSatisfy({ $0.clientID != nil }) {
          return .ok(
            id, title,
            "none configured; each account keeps the client it signed in with (`tokenctl login TYPE:NAME` signs "
              + "it in again with it), and a new sign-in registers tokenctl where the issuer lets it")
        }
        return .warn(
          id, title,
          "no client id configured: at the first sign-in tokenctl registers itself with the issuer if it offers "
            + "dynamic client registration (RFC 7591)",
          fix: "If the issuer offers none, " + manual)
      }
      if !accounts.isEmpty, accounts.allSatisfy({ $0.clientID != nil }) {
        return .warn(
          id, title,
          "no client id configured: the accounts keep refreshing with the client id they were issued to, and "
            + "`tokenctl login TYPE:NAME` signs one in again with it, but signing in another account fails",
          fix: "For new sign-ins, " + manual)
      }
      return .fail(
        id, title, "no client id configured: signing in with \(descriptor.id) fails",
        fix: manual.prefix(1).uppercased() + manual.dropFirst())
    }
  }
}
