import Foundation
import TestSupport

/// Another process that holds connections to a port open without sending a byte, and opens
/// a new one whenever the server closes one: a local program trying to crowd a server out.
///
/// It stops by itself when the test process exits, and after `seconds` in any case.
final class IdleConnectionHolder: Sendable {
  private let process: TestProcess
  private let directory: TemporaryDirectory

  /// Starts the process and waits (without holding a thread) until it has `count`
  /// connections established.
  init(port: Int, count: Int, seconds: Int) async throws {
    directory = try TemporaryDirectory()
    let script = directory.path("hold.py")
    try Self.source.write(toFile: script, atomically: true, encoding: .utf8)
    let output = directory.path("ready")
    process = try TestProcess(
      "python3", [script, String(port), String(count), String(seconds)], stdout: output,
      stderr: directory.path("errors"))
    let giveUp = Date().addingTimeInterval(30)
    while (try? String(contentsOfFile: output, encoding: .utf8)) != "ready\n" {
      guard Date() < giveUp else {
        process.terminate()
        throw TestFailure("the connection holder did not get its connections")
      }
      try? await Task.sleep(for: .milliseconds(20))
    }
  }

  deinit { process.terminate() }

  private static let source = #"""
    import os, selectors, socket, sys, time

    port, count, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    parent = os.getppid()
    end = time.monotonic() + seconds
    selector = selectors.DefaultSelector()

    def open_one():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        # Writable once connected; readable when the server closes it.
        selector.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)

    for _ in range(count):
        open_one()
    connected, told = 0, False
    while time.monotonic() < end and os.getppid() == parent:
        for key, events in selector.select(timeout=0.5):
            s = key.fileobj
            if events & selectors.EVENT_READ:
                try:
                    closed = s.recv(1) == b""
                except OSError:
                    closed = True
                if closed:
                    selector.unregister(s)
                    s.close()
                    open_one()
            elif events & selectors.EVENT_WRITE:
                selector.modify(s, selectors.EVENT_READ)
                connected += 1
        if connected >= count and not told:
            print("ready", flush=True)
            told = True
    """#
}
