import ArgumentParser

/// What `tokenctl --generate-completion-script bash` adds to swift-argument-parser's
/// script, so that an ACCOUNT such as `graph:ada@contoso.com` completes.
///
/// Readline splits words at each character of COMP_WORDBREAKS, which holds `:` and (in
/// Debian's bash) `@`, so `tokenctl token graph:ada@c` reaches a completion function as
/// the words `graph`, `:`, `ada`, `@`, `c`: the generated functions would count five
/// arguments and offer nothing. The function below joins a word to the one before when
/// no space parts them and either side of the join is a `:` or `@`, calls the generated
/// function with the joined words (and the current word's backslash escapes undone, as
/// `-o filenames` inserts `graph\:`), then drops from each candidate the part readline
/// keeps, the text before its own word. This is bash-completion's
/// `__reassemble_comp_words_by_ref` and `__ltrim_colon_completions`, written out because
/// that package may be missing. The user's COMP_WORDBREAKS is left as it is; other
/// programs' completion depends on it.
enum BashCompletionScript {
  /// `generated` with the joining function added and registered in place of the
  /// generated one.
  static func amended(_ generated: String) -> String {
    (generated.hasSuffix("\n") ? generated : generated + "\n") + joiningSplitWords
  }

  /// Whether `arguments` asked for the completion script of bash (by name, or through
  /// $SHELL, which swift-argument-parser reads and reports in `CompletionShell.requesting`).
  static func isRequested(by arguments: [String]) -> Bool {
    // A completion request holds the user's words, which may name the option too.
    arguments.first != "---completion"
      && arguments.contains { $0 == "--generate-completion-script" || $0.hasPrefix("--generate-completion-script=") }
      && CompletionShell.requesting == .bash
  }

  private static let joiningSplitWords = #"""

    # tokenctl: join the words readline split at ':' and '@' (see BashCompletionScript.swift).
    __tokenctl_join_split_words() {
        local -a joined=() starts=()
        local rest="${COMP_LINE}" word stripped
        local -i index offset=0 cword=-1 split=0
        for index in "${!COMP_WORDS[@]}"; do
            word="${COMP_WORDS[index]}"
            stripped="${rest#"${rest%%[![:space:]]*}"}"
            if [[ "${stripped:0:${#word}}" != "${word}" ]]; then
                # Words that are not the line's text: leave them to the generated function.
                _tokenctl "${@}"
                return
            fi
            if ((index > 0 && ${#rest} == ${#stripped})) && [[ "${word}" == [:@]* || "${joined[-1]}" == *[:@] ]]; then
                joined[-1]+="${word}"
                ((index == COMP_CWORD)) && split=1
            else
                ((offset += ${#rest} - ${#stripped}))
                joined+=("${word}")
                starts+=("${offset}")
            fi
            ((index == COMP_CWORD)) && cword=$((${#joined[@]} - 1))
            rest="${stripped:${#word}}"
            ((offset += ${#word}))
        done
        if ((cword < 0 || COMP_POINT < starts[cword])); then
            _tokenctl "${@}"
            return
        fi
        local typed="${COMP_LINE:starts[cword]:COMP_POINT-starts[cword]}"
        local cur="${2}"
        ((split)) && cur="${typed}"
        local -a COMP_WORDS=("${joined[@]}")
        local -i COMP_CWORD="${cword}"
        _tokenctl "${1}" "${cur//\\/}" "${joined[cword - 1]}"
        if ((split)); then
            local kept="${typed:0:${#typed}-${#2}}"
            kept="${kept//\\/}"
            COMPREPLY=("${COMPREPLY[@]#"${kept}"}")
        fi
    }

    complete -o filenames -F __tokenctl_join_split_words tokenctl
    """#
}
