/// The programs that run other programs' code, for the note `allow` adds: a grant to an
/// interpreter is a grant to every script it runs.
struct Interpreter {
  let scripts: String

  init?(_ path: String) {
    // python3.11 is python, bash5 is bash; what remains must be the family's whole name,
    // so that `sh` says nothing of `shotwell`.
    var name = Substring(path.split(separator: "/").last ?? "")
    while let last = name.last, last.isNumber || last == "." || last == "-" { name = name.dropLast() }
    let families: [(name: Substring, scripts: String)] = [
      ("python", "Python programs"), ("perl", "Perl programs"), ("ruby", "Ruby programs"),
      ("node", "JavaScript programs"),
      ("gjs", "JavaScript programs"), ("java", "Java programs"), ("php", "PHP programs"), ("lua", "Lua programs"),
      ("bash", "shell scripts"), ("dash", "shell scripts"), ("zsh", "shell scripts"), ("fish", "shell scripts"),
      ("busybox", "shell scripts"), ("ksh", "shell scripts"), ("sh", "shell scripts"),
    ]
    guard let family = families.first(where: { name == $0.name }) else { return nil }
    scripts = family.scripts
  }
}
