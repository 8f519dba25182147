import TokenCtlCLI
import TokenKit
import TokenStoreTesting

/// tokenctl run in-process with the built-in types and an in-memory keyring on `backing`,
/// at `clock`, with `environment` and standard output a terminal or not: its exit status
/// and what it printed. What the command suites that need no transport or browser of
/// their own run.
func runInMemory(
  _ arguments: [String], backing: InMemoryTokenStore.Backing = InMemoryTokenStore.Backing(), clock: any WallClock,
  environment: [String: String], terminal: Bool = false
) async throws -> (status: Int32, stdout: String, stderr: String) {
  let output = CapturedOutput(isTerminal: terminal)
  let context = CLIContext(
    registry: try BuiltinPlugins.registry(), makeStore: { InMemoryTokenStore(group: $0, backing: backing) },
    clock: clock, environment: environment, output: output)
  let status = await TokenCtl.main(arguments: arguments, context: context)
  return (status, output.stdout, output.stderr)
}
