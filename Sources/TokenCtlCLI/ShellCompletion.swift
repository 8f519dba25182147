import AccountTypeFiles
import ArgumentParser
import TokenKit

/// Completions that depend on the user's world: the accounts of a group (from the
/// keyring) and the account type ids (built in and from type files).
///
/// A shell runs `tokenctl ---completion …` on every TAB, so these run inside the parser,
/// in ``TokenCtl/main(arguments:context:shortcuts:)``, and must behave there: they print
/// nothing (a warning would land in the middle of the user's command line), never prompt,
/// open nothing and ask no agent, and answer nothing at all (exit 0) when the keyring is
/// locked or absent. Accounts come from the store's `list`, the attributes of the keyring
/// items: no secret is read, so neither an unlock prompt nor a damaged token set can stop
/// completion.
enum ShellCompletion {
  /// For every argument and option that takes an ACCOUNT.
  static let accounts = CompletionKind.custom { words, index, _ in
    guard let context = CLIContext.current else { return [] }
    return CompletionWord.offered(accountWords(words, completing: index, in: context), to: CompletionShell.requesting)
  }

  /// For every argument and option that takes an account TYPE.
  static let types = CompletionKind.custom { _, _, _ in
    guard let context = CLIContext.current else { return [] }
    return CompletionWord.offered(registry(in: context).ids, to: CompletionShell.requesting)
  }

  /// For `login`'s TYPE-OR-ACCOUNT: the types, and the accounts `login ACCOUNT` signs in
  /// again, less any word login would read as a type.
  static let typesAndAccounts = CompletionKind.custom { words, index, _ in
    guard let context = CLIContext.current else { return [] }
    let registry = registry(in: context)
    let accounts = accountWords(words, completing: index, in: context, registry: registry).filter {
      !SignInAgain.readsAsType($0, registry: registry)
    }
    return CompletionWord.offered(registry.ids + accounts, to: CompletionShell.requesting)
  }

  private static func accountWords(
    _ words: [String], completing index: Int, in context: CLIContext, registry: AccountTypeRegistry? = nil
  ) -> [String] {
    do {
      let group = try GroupOption.name(try groupOption(in: words, completing: index), in: context)
      let listings = try context.makeStore(group).list(.all)
      let knownTypes = Set((registry ?? Self.registry(in: context)).ids)
      return AccountCandidates(accounts: listings.map(\.account), knownTypes: knownTypes).words
    } catch {
      return []
    }
  }

  /// The built-in types and the user's type files; a bad file is skipped without the
  /// warning the commands print.
  private static func registry(in context: CLIContext) -> AccountTypeRegistry {
    UserTypes.registry(adding: context.registry, environment: context.environment) { _ in }
  }

  /// The value of the last `--group` on the command line being completed, if any; throws
  /// when it is quoted or escaped in a way this does not undo, rather than offer the
  /// accounts of another group.
  ///
  /// The words come as the shell holds them, quotes and all (fish 3 gives them unquoted);
  /// a value whole in single or double quotes without anything special inside is undone.
  static func groupOption(in words: [String], completing index: Int) throws -> String? {
    var value: String?
    var position = words.startIndex
    while position < words.endIndex {
      let word = words[position]
      defer { position += 1 }
      guard position != index, word.hasPrefix("--group") else { continue }
      if word == "--group", position + 1 < words.endIndex, position + 1 != index {
        value = words[position + 1]
        position += 1
      } else if word.hasPrefix("--group=") {
        value = String(word.dropFirst("--group=".count))
      }
    }
    return try value.map(unquoted)
  }

  private static func unquoted(_ word: String) throws -> String {
    let special: Set<Character> = ["'", "\"", "\\", "$", "`"]
    if !word.contains(where: special.contains) { return word }
    for quote: Character in ["'", "\""] where word.count >= 2 && word.first == quote && word.last == quote {
      let inner = word.dropFirst().dropLast()
      if !inner.contains(where: special.contains) { return String(inner) }
    }
    throw UnreadableGroup()
  }

  private struct UnreadableGroup: Error {}
}
