import AccountTypeFiles
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The verdict of `tokenctl types --check` on one account type file.
struct TypeFileCheck {
  var path: String
  /// The type's id when the file is usable, else nil.
  var id: String?
  /// What a usable file leaves to defaults that a reader should know of: the scopes a
  /// sign-in asks for when the file names none.
  var notes: [String] = []
  /// What is wrong, each line `path:line:column: message` where there is a place.
  var problems: [String]
  /// The loader's refusal, when the file could not be used as a whole (unreadable, or its
  /// owner or mode refused), with its fix as recovery: `doctor` shows the two apart.
  var refusal: TokenKitError?

  /// Checks the file at `path` as tokenctl would load it, and its id against the types of
  /// `registry` other than the one this very file defined.
  init(path: String, registry: AccountTypeRegistry) {
    self.path = path
    do {
      let descriptor = try UserTypes.descriptor(at: path)
      problems = []
      if let entry = registry.entry(descriptor.id), Self.realPath(entry.source) != Self.realPath(path) {
        problems.append("\(path): account type '\(descriptor.id)' is already defined by \(entry.source)")
      }
      id = problems.isEmpty ? descriptor.id : nil
      if let note = Self.scopesNote(descriptor) { notes.append(note) }
    } catch let error as DescriptorFileError {
      problems = error.problems
    } catch let error as TokenKitError {
      problems = [UserTypes.problem(error)]
      refusal = error
    } catch {
      problems = ["\(path): \(error)"]
    }
  }

  var isValid: Bool { id != nil }

  /// `FILE: ok (type ID)` and its notes, or the problems, each on its own line.
  var report: String {
    if let id {
      return ([TerminalSafe.text("\(path): ok (type \(id))")] + notes.map { "  note: " + TerminalSafe.text($0) })
        .joined(separator: "\n") + "\n"
    }
    return problems.map { TerminalSafe.text($0) + "\n" }.joined()
  }

  /// For a type that names no scopes: what its sign-in asks for instead
  /// (``EndpointDescriptor/signInScopes``), which a sign-in that needs more will not get.
  static func scopesNote(_ descriptor: EndpointDescriptor) -> String? {
    guard descriptor.defaultScopes.isEmpty else { return nil }
    let asked = descriptor.signInScopes
    return "no scopes named: a sign-in asks for "
      + (asked.isEmpty ? "none (the server's default)" : asked.joined(separator: " "))
      + ", and a client credentials sign-in for none; set scopes = [...] for more"
  }

  /// The canonical path, so that `./corp.toml` and the loaded file compare equal; sources
  /// that are not files (`plugin OpenIDConnect`) stay as they are.
  private static func realPath(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
  }
}
