import ApplicationConsent
import ArgumentParser
import NativeAppSupport
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#endif

extension TokenCtl {
  /// `tokenctl setup-docker`: name `docker-credential-tokenctl` as the credential helper of
  /// registries in the files Docker, Podman, Buildah and skopeo read.
  struct SetupDocker: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "setup-docker",
      abstract: "Configure Docker, Podman and skopeo to get registry credentials from tokenctl.",
      discussion: """
        Sets credHelpers.HOST to "tokenctl" for each host, so that the tools run \
        docker-credential-tokenctl for it, in Docker's \
        config ($DOCKER_CONFIG/config.json, else ~/.docker/config.json) and in the \
        containers tools' auth.json ($XDG_CONFIG_HOME/containers/auth.json; also \
        $REGISTRY_AUTH_FILE when set, and $XDG_RUNTIME_DIR/containers/auth.json when it \
        exists, since those are read first). Every other setting in the files is kept; each \
        is replaced whole and left readable only by you. --unset removes tokenctl's \
        entries and leaves the others.
        """)

    @Option(
      name: .customLong("host"),
      help: ArgumentHelp(
        "A registry host, with its port if any (repeatable).", valueName: "host"))
    var hosts: [String] = []

    @Flag(help: "Remove tokenctl's entries instead of adding them.")
    var unset = false

    /// The most of a tool's configuration file read: far more than any holds.
    static let maximumFileLength = 4 * 1024 * 1024
    /// The helper's name as the files give it: the tools run `docker-credential-` + this.
    static let helperName = "tokenctl"

    func validate() throws {
      // Not every host a type serves is a registry (github.com's is ghcr.io): the user names them.
      guard !hosts.isEmpty else { throw ValidationError("Name the registry: --host HOST, such as --host ghcr.io.") }
      try HostArgument.validate(hosts)
    }

    func run() throws {
      let session = try CommandSession.open(group: nil)
      let context = session.context
      let chosen = hosts.map { $0.lowercased() }
      // A host no type serves gets no answer: say so now, not at the first failed pull.
      let served = Set(Credential.helper(session, name: "tokenctl setup-docker").servedHosts())
      for host in chosen where !served.contains(host) {
        context.warnings.add(
          "no account type serves \(host), so the helper will not answer for it: add it to a type's [credentials] hosts "
            + "(tokenctl-types(5)); 'tokenctl types' lists the types")
      }
      for path in Self.files(environment: context.environment) {
        try Self.update(path, hosts: chosen, unset: unset)
        for host in chosen {
          context.inform(
            unset ? "\(path) no longer names tokenctl for \(host)." : "\(path) names tokenctl for \(host).")
        }
      }
    }

    /// The files to change, each once, in the order the containers tools read them.
    static func files(environment: [String: String]) -> [String] {
      let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/"
      func absolute(_ variable: String) -> String? {
        environment[variable].flatMap { $0.hasPrefix("/") ? $0 : nil }
      }
      var files: [String] = []
      if let file = absolute("REGISTRY_AUTH_FILE") { files.append(file) }
      // Read before the durable file below, so an old `podman login` there would win.
      if let runtime = absolute("XDG_RUNTIME_DIR"), access(runtime + "/containers/auth.json", F_OK) == 0 {
        files.append(runtime + "/containers/auth.json")
      }
      files.append((absolute("XDG_CONFIG_HOME") ?? home + "/.config") + "/containers/auth.json")
      files.append((absolute("DOCKER_CONFIG") ?? home + "/.docker") + "/config.json")
      var seen = Set<String>()
      return files.filter { seen.insert($0).inserted }
    }

    /// Sets (or removes) `credHelpers` entries for `hosts` in the JSON object at `path`,
    /// keeping every other member, and writes it back atomically, readable only by the user.
    static func update(_ path: String, hosts: [String], unset: Bool) throws {
      var document: [String: JSONValue] = [:]
      let file: PrivateFile.Contents?
      do throws(FileProblem) {
        // Another tool's file, the user's business: any owner and mode, links followed.
        file = try PrivateFile.read(path, limit: maximumFileLength, policy: nil, followingLinks: true)
      } catch .tooLarge {
        throw TokenKitError(
          .notConfigured, "\(path) is larger than a configuration file can be", recovery: moveAway(path))
      } catch .unreadable(let code) {
        throw TokenKitErrorFactory.io("read \(path)", errno: code)
      } catch {
        throw TokenKitError(
          .notConfigured, "\(path) is not a regular file, so tokenctl leaves it alone", recovery: moveAway(path))
      }
      if let bytes = file?.bytes {
        let blank = bytes.allSatisfy { $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }
        guard blank || JSONValue.parseObject(bytes) != nil else {
          throw TokenKitError(
            .notConfigured, "\(path) is not a JSON object, so tokenctl leaves it alone", recovery: moveAway(path))
        }
        document = blank ? [:] : JSONValue.parseObject(bytes) ?? [:]
      } else if unset {
        return
      }
      var helpers = document["credHelpers"]?.objectValue ?? [:]
      for host in hosts {
        if unset {
          if helpers[host]?.stringValue == helperName { helpers[host] = nil }
        } else {
          helpers[host] = .string(helperName)
        }
      }
      document["credHelpers"] = helpers.isEmpty && unset ? nil : .object(helpers)
      try makeDirectories(String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]))
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
      try AtomicFile.write(Array(try encoder.encode(document)) + [10], to: path)
    }

    /// The way out of a file tokenctl cannot change: a command that runs as printed.
    private static func moveAway(_ path: String) -> String {
      "Fix it, or move it away (mv \(ShellWord.quoted(path)) \(ShellWord.quoted(path + ".old"))) and run this again."
    }

    /// Creates `path` and its missing parents, private (0700) as the tools make them.
    private static func makeDirectories(_ path: String) throws {
      var partial = ""
      for component in path.split(separator: "/") {
        partial += "/" + component
        if mkdir(partial, 0o700) != 0 && errno != EEXIST {
          throw TokenKitErrorFactory.io("create the directory \(partial)", errno: errno)
        }
      }
    }
  }
}
