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

  /// `FILE: ok (type ID)`, or the problems, each on its own line.
  var report: String {
    if let id { return TerminalSafe.text("\(path): ok (type \(id))") + "\n" }
    return problems.map { TerminalSafe.text($0) + "\n" }.joined()
  }

  /// The canonical path, so that `./corp.toml` and the loaded file compare equal; sources
  /// that are not files (`plugin OpenIDConnect`) stay as they are.
  private static func realPath(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
  }
}
