import NativeAppSupport
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// Programs of the host as consent names them: the canonical path of their executable,
/// which is what the agent reads from `/proc/PID/exe` for a peer outside any sandbox.
/// (Flatpak apps are named by their app id: ``ApplicationIdentity``.)
///
/// A script is run by its interpreter, so the application of a Python script is
/// `/usr/bin/python3.11`, and a grant to it is a grant to every Python program of the user.
public enum ApplicationPath {
  /// The canonical path of the executable `argument` names, as `/proc/PID/exe` will show
  /// it: a name with a `/` is taken relative to `currentDirectory`, a bare name is looked
  /// up in `PATH` as a shell would; then every symbolic link is resolved (`python3` is
  /// `/usr/bin/python3.11`).
  ///
  /// Throws when there is no such file, or it is not an executable regular file.
  public static func resolve(
    _ argument: String, environment: [String: String], currentDirectory: String
  ) throws
    -> String
  {
    guard !argument.isEmpty else {
      throw TokenKitError(.invalidArgument, "the application is empty", recovery: "Name a program, such as python3.")
    }
    let candidate: String
    if argument.contains("/") {
      candidate = argument.hasPrefix("/") ? argument : currentDirectory + "/" + argument
    } else {
      // Empty entries of PATH mean the current directory to a shell; they are skipped here,
      // since a grant should not depend on where the command was typed.
      let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
      let directories = path.split(separator: ":").filter { $0.hasPrefix("/") }
      guard let found = directories.map({ "\($0)/\(argument)" }).first(where: isExecutableFile) else {
        throw TokenKitError(
          .invalidArgument, "no program '\(argument)' in PATH",
          recovery:
            "Give the program's full path, such as /usr/bin/\(argument), or check its name with `command -v \(argument)`."
        )
      }
      candidate = found
    }
    guard let resolved = realpath(candidate, nil) else {
      let reason = String(cString: strerror(errno))
      throw TokenKitError(
        .invalidArgument, "cannot find the program \(candidate): \(reason)",
        recovery: "Give the path of an installed program, such as /usr/bin/python3.")
    }
    defer { free(resolved) }
    let canonical = String(cString: resolved)
    guard isExecutableFile(canonical) else {
      throw TokenKitError(
        .invalidArgument, "\(canonical) is not an executable file",
        recovery: "Name the program itself (for a script, its interpreter, such as /usr/bin/python3).")
    }
    return canonical
  }

  /// The application named by a `/proc/PID/exe` link: the kernel appends ` (deleted)` when
  /// the file was removed or replaced while running, as a package upgrade does, and the
  /// program is still the one that was installed at that path.
  public static func fromProcessLink(_ target: String) -> String {
    PeerApplication.withoutDeletedSuffix(target)
  }

  /// Whether `path` is a script (it starts with `#!`). The kernel runs a script's
  /// interpreter, so `/proc/PID/exe` never names the script itself, and a wrapper such as
  /// a version manager's shim names whatever it finally runs.
  public static func isScript(_ path: String) -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var magic: [UInt8] = [0, 0]
    return read(fd, &magic, 2) == 2 && magic == [UInt8(ascii: "#"), UInt8(ascii: "!")]
  }

  private static func isExecutableFile(_ path: String) -> Bool {
    var info = stat()
    // stat, not lstat: a link to a program is the program.
    guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
    return access(path, X_OK) == 0 && info.st_mode & 0o111 != 0
  }
}
