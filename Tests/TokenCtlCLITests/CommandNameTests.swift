import ArgumentParser
import Testing
import TokenCtlCLI

/// Start-up cost: a command without an explicit name makes swift-argument-parser derive it
/// with `String(describing:)` on every run of every command, a fifth of the instructions
/// of `tokenctl token`.
@Suite struct CommandNameTests {
  @Test func everyCommandNamesItself() {
    var unnamed: [String] = []
    var pending: [any ParsableCommand.Type] = [TokenCtl.self]
    while let command = pending.popLast() {
      if command.configuration.commandName == nil { unnamed.append("\(command)") }
      pending += command.configuration.subcommands
    }
    #expect(unnamed.isEmpty, "set commandName in the configuration of \(unnamed)")
  }
}
