import ArgumentParser

/// Which words from the keyring and the type files may reach a shell as completions, and
/// how each shell must receive them.
///
/// Account names are chosen by servers (and any program of the user's can write a keyring
/// item), yet the scripts swift-argument-parser generates pass completions on unquoted:
/// bash's `compgen -W` expands each word (`$(…)`, backticks, `${…}`, braces, a leading
/// `~`), zsh's `_describe` reads `:` and `\`, fish reads a tab as the start of a
/// description, and all three split at newlines. Escaping for each would have to follow
/// each script's internals; a word with any character outside a plain set is left out
/// instead (the account is then still offered as `TYPE:ID`, when that is plain).
enum CompletionWord {
  /// The longest word offered: a name longer than this is nobody's to type.
  static let maximumLength = 200

  /// Whether `word` can be offered to any shell as it is: letters, marks and digits of any
  /// script, a space, and `@ . _ - + : / , % #`; not empty, not starting with `-` (it
  /// would be read as an option) or `:` (zsh's mark of a word without a value), and no
  /// longer than ``maximumLength``.
  static func isPlain(_ word: String) -> Bool {
    guard let first = word.unicodeScalars.first, first != "-", first != ":", word.count <= maximumLength
    else { return false }
    return word.unicodeScalars.allSatisfy { scalar in
      if scalar.isASCII { return plainASCII.contains(UInt8(scalar.value)) }
      switch scalar.properties.generalCategory {
      case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
        .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
        return true
      default:
        return false
      }
    }
  }

  private static let plainASCII = Set(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 @._-+:/,%#".utf8)

  /// The plain ones of `words`, as `shell` reads them: zsh's `_describe` takes a `:` for
  /// the start of a description unless escaped.
  static func offered(_ words: [String], to shell: CompletionShell?) -> [String] {
    let plain = words.filter(isPlain)
    guard shell == .zsh else { return plain }
    return plain.map { $0.split(separator: ":", omittingEmptySubsequences: false).joined(separator: "\\:") }
  }
}
