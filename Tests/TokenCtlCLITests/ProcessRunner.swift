import Foundation

/// What a finished child process left behind.
struct ProcessResult {
  var status: Int32
  var stdout: String
  var stderr: String
}

/// Runs programs for the tests, with an explicit environment and standard input.
enum ProcessRunner {
  /// The `tokenctl` built beside this test bundle (`swift build --build-tests` builds both).
  static var tokenctl: String {
    if let path = ProcessInfo.processInfo.environment["TOKENCTL_BIN"] { return path }
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return me.deletingLastPathComponent().appendingPathComponent("tokenctl").path
  }

  static func run(
    _ executable: String, _ arguments: [String], environment: [String: String], stdin: String = ""
  ) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : try which(executable))
    process.arguments = arguments
    process.environment = environment
    let input = Pipe(), output = Pipe(), error = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = error
    try process.run()
    input.fileHandleForWriting.write(Data(stdin.utf8))
    try input.fileHandleForWriting.close()
    // Read both pipes to the end before waiting, so a full pipe cannot deadlock the child.
    let out = Thread.detachedRead(output.fileHandleForReading)
    let err = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(
      status: process.terminationStatus, stdout: String(decoding: out.wait(), as: UTF8.self),
      stderr: String(decoding: err, as: UTF8.self))
  }

  static func which(_ name: String) throws -> String {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
      let path = "\(directory)/\(name)"
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: name])
  }
}

extension Thread {
  /// Reads a pipe to its end on another thread.
  final class PendingRead: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()
    fileprivate init(_ handle: FileHandle) {
      Thread.detachNewThread { [self] in
        data = handle.readDataToEndOfFile()
        done.signal()
      }
    }
    func wait() -> Data {
      done.wait()
      return data
    }
  }

  static func detachedRead(_ handle: FileHandle) -> PendingRead { PendingRead(handle) }
}
