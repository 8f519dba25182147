import AgentProtocol
import ApplicationConsent
import CLinux
import NativeAppSupport
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// A socket the agent opened for one host it is forwarded to (`tokenctl ssh`,
/// tokenctl-agent(1), "Forwarding"): every request on it is the host's, whatever process
/// the connection shows (the local `ssh`, which carries the host's connections here).
///
/// It lives in `forward/` beside the agent's own socket, a private folder (0700), itself
/// 0600 under a name nobody can guess ahead, and exactly as long as the connection of the
/// `tokenctl ssh` that asked for it: when that closes (the session ended, or the wrapper
/// was killed), the file is removed and the listener closed, so that the remote end of
/// the forwarding answers nothing more.
final class ForwardedSocket: Sendable {
  let host: HostName
  let path: String
  let descriptor: Int32
  /// Closed by ``close()`` to wake the thread that accepts (`poll` sees its other end hang up).
  private let stopWrite: Int32
  let stopRead: Int32

  private init(host: HostName, path: String, descriptor: Int32, stop: (read: Int32, write: Int32)) {
    self.host = host
    self.path = path
    self.descriptor = descriptor
    stopRead = stop.read
    stopWrite = stop.write
  }

  /// A new socket for `host` in `folder` (made private if need be): 0600 from the start.
  static func open(host: HostName, folder: String, root: String?) throws -> ForwardedSocket {
    try XDGDirectories.ensurePrivateDirectory(folder, within: root.flatMap { folder.hasPrefix($0) ? $0 : nil })
    var generator = SystemRandomNumberGenerator()
    let name = (0..<2).map { _ in String(generator.next() as UInt32, radix: 16) }.joined(separator: "-")
    let path = folder + "/" + name + ".sock"
    let descriptor = try AgentListener.listeningSocket(at: path, what: "a forwarded host's socket")
    var ends: [Int32] = [-1, -1]
    guard tokenctl_pipe2(&ends, O_CLOEXEC) == 0 else {
      let failure = errno
      Glibc.close(descriptor)
      unlink(path)
      throw TokenKitErrorFactory.io("listen on \(path)", errno: failure, kind: .agentFailure)
    }
    return ForwardedSocket(host: host, path: path, descriptor: descriptor, stop: (ends[0], ends[1]))
  }

  /// What the thread that accepts was woken for.
  enum Event {
    /// A new connection.
    case connection(Int32)
    /// The request of a connection in the waiting list has come (or its peer hung up).
    case request(Int32)
    /// None of that within the wait given.
    case timedOut
  }

  /// The next event: a new connection, or bytes on one of `waiting` (connections held for
  /// their request, ``Agent``'s idle bound being full), within `timeoutMilliseconds` (-1:
  /// no limit); nil once ``close()`` was called (the listener is then closed).
  func next(waiting: [Int32], timeoutMilliseconds: Int32) -> Event? {
    while true {
      var entries =
        [
          pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
          pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0),
        ] + waiting.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      let ready = poll(&entries, nfds_t(entries.count), timeoutMilliseconds)
      if ready < 0 {
        if errno == EINTR { continue }
        break
      }
      if ready == 0 { return .timedOut }
      if entries[1].revents != 0 { break }
      if let held = entries.dropFirst(2).first(where: { $0.revents != 0 }) { return .request(held.fd) }
      let connection = tokenctl_accept4(descriptor, Int32(SOCK_CLOEXEC.rawValue))
      if connection >= 0 { return .connection(connection) }
      if errno == EINTR || errno == ECONNABORTED || errno == EAGAIN { continue }
      if errno == EMFILE || errno == ENFILE {
        usleep(10_000)
        continue
      }
      break
    }
    Glibc.close(descriptor)
    Glibc.close(stopRead)
    return nil
  }

  /// Removes the socket file at once (no new connection reaches it) and wakes the thread
  /// that accepts, which closes the listener.
  func close() {
    unlink(path)
    Glibc.close(stopWrite)
  }
}
