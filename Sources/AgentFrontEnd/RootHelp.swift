import CLinux

/// `tokenctl --help` (and `-h`, `help`) in the front end: the full program's root help,
/// kept word for word in ``text`` (RootHelp+Text.swift, written by `make front-end-help`),
/// so that the first command a new user runs does not start the full program.
///
/// swift-argument-parser lays help out to the width it finds (its `Platform.terminalWidth`),
/// and the stored text is the one it prints 80 columns wide: where the full program would
/// lay it out to another width, the front end runs it. A test compares the stored text
/// with the full program's, and `make check-front-end-help` fails when they differ.
public enum RootHelp {
  /// The command lines that print the root help, here and in the full program
  /// (`TokenCtl.Shortcut.help`).
  public static func isRequested(by arguments: [String]) -> Bool {
    arguments == ["--help"] || arguments == ["-h"] || arguments == ["help"]
  }

  /// The width ``text`` is laid out to: swift-argument-parser's when standard output is no
  /// terminal and `COLUMNS` is unset (a pipe, a file, a script's capture).
  public static let width = 80

  /// The width swift-argument-parser lays help out to: `COLUMNS` when it reads as an
  /// integer (`Int(_:)`, as the parser reads it), else the width of the terminal standard
  /// output is, else 80.
  public static func outputWidth(_ variable: (String) -> String?) -> Int {
    if let columns = variable("COLUMNS"), let width = Int(columns) { return width }
    let reported = Int(tokenctl_terminal_columns(1))
    return reported > 0 ? reported : 80
  }

  /// What the full program prints for `arguments` when it is the stored help laid out as
  /// the parser would lay it out now; nil for any other command line or width.
  public static func printed(for arguments: [String], _ variable: (String) -> String?) -> String? {
    guard isRequested(by: arguments), outputWidth(variable) == width else { return nil }
    return text + "\n"
  }
}
