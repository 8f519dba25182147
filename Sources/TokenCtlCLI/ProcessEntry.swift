import AgentFrontEnd
import AgentProtocol
import ProcessRuntime
import TokenCtlRuntime

#if canImport(Glibc)
  import Glibc
#endif

extension TokenCtl {
  /// Runs tokenctl as this process: reads the environment from getenv's table (not
  /// ProcessInfo, to keep Foundation off the start-up path), runs the command line with
  /// `prefix` before the process's arguments, and exits with its status. Both
  /// executables, `tokenctl` and `git-credential-tokenctl`, are this call.
  ///
  /// Synchronous, and called from a `main.swift` without `await`, so that a client the agent
  /// answers never starts Swift's concurrency runtime: no libdispatch set-up, no worker
  /// thread. That is a third of the memory such a client would otherwise touch
  /// (`make bench`, row 6a). Everything else runs in a task on ``ThreadPoolExecutor``, the main thread
  /// being one of its threads: libdispatch's pool, which wakes every second once started,
  /// must not run in the resident agent, which is this call too.
  public static func runAsProcess(prefix: [String] = [], name: String) -> Never {
    // Before anything reads a token: this process, the git helper and the refresh child
    // (both are this call) leave no core dump, and no other process may trace them.
    ProcessProtection.forbidCoreDumpsAndTracing()
    let arguments = Array(CommandLine.arguments.dropFirst())
    // The refresh child runs under either executable's name, without its prefix.
    let full = arguments.first == RefreshWorker.commandName ? arguments : prefix + arguments
    // What the front end (tokenctl-front-end) did before it ran this program, if it did.
    let fastPath: AgentFastPath.Result
    var cargoUnread: [UInt8]?
    // An answer for a command the fast path does not take (`list`), for the command itself.
    var handedOver: AgentMessage?
    switch FrontEnd.takeHandOver() {
    case .agentSilent, .noAgent: fastPath = .direct(input: nil)
    case .answer(let answer):
      fastPath = AgentFastPath.run(full, handedOver: answer)
      if case .notTaken = fastPath { handedOver = answer }
    case .agentSilentWhileWorking(let pid):
      // Said as the agent's errors are, and answered instead of the direct path's wait for
      // the refresh lock the silent agent may hold.
      fastPath = AgentFastPath.run(full, handedOver: AgentMessage(error: AgentClient.silentWhileWorking(pid: pid)))
    case .cargo(let unread):
      cargoUnread = unread
      fastPath = .direct(input: nil)
    case nil: fastPath = AgentFastPath.run(full)
    }
    if case .done(let status) = fastPath { Glibc.exit(status) }
    let environment = ProcessEnvironment.current()
    do {
      var context = try CLIContext.live(environment: environment)
      context.cargoUnread = cargoUnread
      if let handedOver { context.agent = AgentClient(environment: environment, handedOver: handedOver) }
      if case .direct(let input) = fastPath {
        // The agent was asked already; git's request, if read, is the one to answer.
        context.agent = nil
        if let input { context.readInput = { _ in input } }
        // None answered: where no other way starts it, start one for the next client.
        AgentOnDemand.startIfWanted(environment: environment)
      }
      let pool = ThreadPoolExecutor.shared
      pool.serveOnCurrentThread {
        Task(executorPreference: pool) { [context] in Glibc.exit(await main(arguments: full, context: context)) }
      }
    } catch {
      // The built-in plugins are checked by the tests; reaching this is a broken build.
      StandardOutput().writeError("\(name): \(error)\n")
      Glibc.exit(1)
    }
  }
}
