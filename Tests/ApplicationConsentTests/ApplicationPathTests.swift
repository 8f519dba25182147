import ApplicationConsent
import Foundation
import NativeAppSupport
import TestSupport
import Testing
import TokenKit

/// How an application named on the command line becomes the path `/proc/PID/exe` shows.
@Suite struct ApplicationPathTests {
  let directory: TemporaryDirectory
  let bin: String
  let program: String

  init() throws {
    directory = try TemporaryDirectory()
    // The temporary directory itself may be reached through a link: compare canonical paths.
    let root = URL(fileURLWithPath: directory.url.path).resolvingSymlinksInPath().path
    bin = root + "/bin"
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    program = bin + "/tool3.11"
    try "#!/bin/sh\n".write(toFile: program, atomically: false, encoding: .utf8)
    #expect(chmod(program, 0o755) == 0)
    #expect(symlink("tool3.11", bin + "/tool3") == 0)
    try "data".write(toFile: bin + "/data", atomically: false, encoding: .utf8)
  }

  @Test func aBareNameIsLookedUpInPATHAndItsLinksResolved() throws {
    let environment = ["PATH": "/nonexistent::relative:\(bin):/usr/bin"]
    #expect(try ApplicationPath.resolve("tool3", environment: environment, currentDirectory: "/") == program)
    #expect(try ApplicationPath.resolve("tool3.11", environment: environment, currentDirectory: "/") == program)
  }

  /// `flatpak:APP_ID` names a Flatpak app, even where PATH has a program of that name.
  @Test func flatpakNamesAnAppNotAProgram() throws {
    try "#!/bin/sh\n".write(toFile: bin + "/flatpak:org.example.App", atomically: false, encoding: .utf8)
    #expect(chmod(bin + "/flatpak:org.example.App", 0o755) == 0)
    #expect(
      try ApplicationArgument.resolve("flatpak:org.example.App", environment: ["PATH": bin], currentDirectory: bin)
        == .flatpak(FlatpakAppID("org.example.App")!))
    #expect(
      try ApplicationArgument.resolve("tool3", environment: ["PATH": bin], currentDirectory: "/")
        == .executable(program))
    let error = #expect(throws: TokenKitError.self) {
      try ApplicationArgument.resolve("flatpak:org.example", environment: ["PATH": bin], currentDirectory: "/")
    }
    #expect(error?.code == .invalidArgument)
    #expect(error?.message.hasPrefix("'flatpak:org.example' names no Flatpak app") == true)
    #expect(error?.recovery == "Give the id `flatpak list --app` shows, such as flatpak:org.example.App.")
  }

  @Test func aPathIsTakenRelativeToTheCurrentDirectory() throws {
    #expect(try ApplicationPath.resolve("bin/tool3", environment: [:], currentDirectory: bin + "/..") == program)
    #expect(try ApplicationPath.resolve("./tool3", environment: [:], currentDirectory: bin) == program)
    #expect(try ApplicationPath.resolve(bin + "/tool3", environment: [:], currentDirectory: "/") == program)
  }

  @Test func theSystemPythonIsItsVersionedExecutable() throws {
    let python = try ApplicationPath.resolve("python3", environment: ["PATH": "/usr/bin"], currentDirectory: "/")
    #expect(
      python.hasPrefix("/usr/bin/python3.")
        && python == URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path)
  }

  @Test(arguments: ["missing", "./missing", "data", "./data", ""])
  func aMissingOrNonExecutableFileIsAnError(argument: String) {
    let error = #expect(throws: TokenKitError.self) {
      try ApplicationPath.resolve(argument, environment: ["PATH": bin], currentDirectory: bin)
    }
    #expect(error?.recovery != nil)
    #expect(error?.code == .invalidArgument)
  }

  @Test func theErrorsSayWhatIsWrong() {
    let missing = #expect(throws: TokenKitError.self) {
      try ApplicationPath.resolve("nosuchtool", environment: ["PATH": bin], currentDirectory: "/")
    }
    #expect(missing?.message == "no program 'nosuchtool' in PATH")
    let data = #expect(throws: TokenKitError.self) {
      try ApplicationPath.resolve(bin + "/data", environment: [:], currentDirectory: "/")
    }
    #expect(data?.message == "\(bin)/data is not an executable file")
  }

  @Test func aDeletedExecutableIsStillTheApplication() {
    #expect(ApplicationPath.fromProcessLink("/usr/bin/python3.11 (deleted)") == "/usr/bin/python3.11")
    #expect(ApplicationPath.fromProcessLink("/usr/bin/python3.11") == "/usr/bin/python3.11")
    #expect(ApplicationPath.fromProcessLink("/opt/a (deleted) b") == "/opt/a (deleted) b")
  }

  /// "Ours" is a file, whatever path reaches it, and not a path.
  @Test func ownExecutablesAreFilesNotPaths() throws {
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    #expect(OwnExecutables.contains(path: me))
    let scratch = try TemporaryDirectory()
    try FileManager.default.createSymbolicLink(atPath: scratch.path("link"), withDestinationPath: me)
    #expect(OwnExecutables.contains(path: scratch.path("link")), "the same file by another path")
    try FileManager.default.copyItem(atPath: me, toPath: scratch.path("copy"))
    #expect(!OwnExecutables.contains(path: scratch.path("copy")), "a copy is another file")
  }
}

extension ApplicationPathTests {
  @Test func scriptsAreToldApart() throws {
    #expect(ApplicationPath.isScript(program))
    #expect(!ApplicationPath.isScript(bin + "/data"))
    #expect(!ApplicationPath.isScript("/proc/self/exe"))
    #expect(!ApplicationPath.isScript(bin + "/missing"))
  }
}
