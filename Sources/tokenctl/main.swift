import TokenCtlCLI

#if canImport(Glibc)
  import Glibc
#endif

// Only the entry point lives here; everything else is in TokenCtlCLI, where tests reach it.
// The environment is read with getenv's table rather than ProcessInfo to keep Foundation
// off the start-up path.
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
  exit(await TokenCtl.main(arguments: Array(CommandLine.arguments.dropFirst()), context: context))
} catch {
  // The built-in plugins are checked by the tests; reaching this is a broken build.
  StandardOutput().writeError("tokenctl: \(error)\n")
  exit(1)
}
