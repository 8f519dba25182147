import NativeAppSupport
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The account types users define in descriptor files (tokenctl-types(5)), found in
/// `$XDG_CONFIG_HOME/tokenctl/types/*.toml` and in `tokenctl/types/*.toml` under each
/// directory of `$XDG_CONFIG_DIRS` (default `/etc/xdg`).
///
/// A bad file never stops tokenctl: it is reported as a one-line warning and skipped, so
/// that one typo cannot lock the user out of every other account.
public enum UserTypes {
  /// The directories searched, the user's first: on a duplicate id the later file is the
  /// one skipped, as the XDG Base Directory Specification ranks the user's directory first.
  public static func directories(environment: [String: String]) -> [String] {
    // The spec's default, and its rule that relative paths are ignored.
    let system = (environment["XDG_CONFIG_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/etc/xdg")
      .split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
    let user = XDGDirectories(environment: environment).config
    var seen = Set<String>()
    return ([user] + system.map { $0 + "/tokenctl" }).map { $0 + "/types" }.filter { seen.insert($0).inserted }
  }

  /// `registry` with every valid file of the type directories added; each file that cannot
  /// be added is passed to `warn` as one line and skipped.
  public static func registry(
    adding registry: AccountTypeRegistry, environment: [String: String], warn: (String) -> Void
  ) -> AccountTypeRegistry {
    var registry = registry
    for directory in directories(environment: environment) {
      let files: [String]
      do {
        files = try descriptorFiles(in: directory)
      } catch {
        warn("skipped \(directory): \(error.message)")
        continue
      }
      for path in files {
        do {
          try registry.register(try descriptor(at: path), source: path)
        } catch let error as DescriptorFileError {
          var line = "skipped " + (error.problems.first ?? path)
          if error.problems.count > 1 {
            line += " (and \(error.problems.count - 1) more; see `tokenctl types --check \(path)`)"
          }
          warn(line)
        } catch let error as TokenKitError {
          warn("skipped \(path): \(problem(error))")
        } catch {
          warn("skipped \(path): \(error)")
        }
      }
    }
    return registry
  }

  /// The `*.toml` files in `directory`, sorted so that the same files always load in the
  /// same order; none when the directory does not exist, the common case, which costs one
  /// failed `opendir`.
  public static func descriptorFiles(in directory: String) throws(TokenKitError) -> [String] {
    guard let handle = opendir(directory) else {
      if errno == ENOENT || errno == ENOTDIR { return [] }
      throw TokenKitError(.notConfigured, "could not read the directory: \(String(cString: strerror(errno)))")
    }
    defer { closedir(handle) }
    var names: [String] = []
    while let entry = readdir(handle) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
      }
      // Editors' backups and hidden files are not meant to be loaded.
      guard name.hasSuffix(".toml"), !name.hasPrefix(".") else { continue }
      names.append(name)
    }
    return names.sorted().map { directory + "/" + $0 }
  }

  /// Reads and parses the file at `path`, and applies config.toml's rule for who may
  /// change it and, holding a secret, read it (``SettingsFile/checkPermissions(holdsSecret:)``).
  ///
  /// - Throws: ``DescriptorFileError`` for a malformed file; ``TokenKitError``
  ///   `notConfigured` when it cannot be read or its permissions are refused.
  public static func descriptor(at path: String) throws -> EndpointDescriptor {
    guard let file = try SettingsFile.read(path) else {
      throw TokenKitError(.notConfigured, "\(path): no such file")
    }
    let descriptor = try DescriptorFile.parse(file.bytes, source: path)
    try file.checkPermissions(holdsSecret: descriptor.clientSecret != nil)
    return descriptor
  }

  /// An error about a file as one line: what is wrong and, where there is one, the fix,
  /// since a warning has no room for a hint of its own.
  public static func problem(_ error: TokenKitError) -> String {
    error.message + (error.recovery.map { ". " + $0 } ?? "")
  }
}
