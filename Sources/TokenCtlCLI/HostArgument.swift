import ArgumentParser

/// A host given to `setup-git --host` or `setup-docker --host`: the one rule for both.
enum HostArgument {
  /// Refuses anything but a host name with an optional port: the host becomes part of a
  /// git configuration key and a URL, and a key of the tools' JSON files.
  static func validate(_ hosts: [String]) throws {
    for host in hosts {
      guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || ".-:[]".contains($0) }) else {
        throw ValidationError("'\(host)' is not a host name (give it without https:// or a path).")
      }
    }
  }
}
