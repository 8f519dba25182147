import TokenCtlCLI

#if canImport(Glibc)
  import Glibc
#endif

// git runs `git-credential-tokenctl get|store|erase` for `credential.helper=tokenctl`; this
// is `tokenctl credential …` under the name git looks for, with the same start-up path as
// tokenctl's own entry point (getenv's table, no Foundation).
var environment: [String: String] = [:]
var entry = environ
while let pointer = entry.pointee {
  let pair = String(cString: pointer)
  if let equals = pair.firstIndex(of: "=") {
    environment[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
  }
  entry += 1
}
do {
  let context = try CLIContext.live(environment: environment)
  let arguments = ["credential"] + CommandLine.arguments.dropFirst()
  exit(await TokenCtl.main(arguments: arguments, context: context))
} catch {
  // The built-in plugins are checked by the tests; reaching this is a broken build.
  StandardOutput().writeError("git-credential-tokenctl: \(error)\n")
  exit(1)
}
