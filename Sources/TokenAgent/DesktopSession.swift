import AgentBus
import ApplicationConsent
import NativeAppSupport
import Synchronization
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The agent's life on the desktop: its D-Bus object, the notifications that ask for
/// consent, and the signals and notifications of accounts that changed or need a sign-in.
enum DesktopSession {
  /// Starts the D-Bus service; nil (logged) when there is no session bus or another agent
  /// holds the name. The socket is served either way.
  static func start(
    desktop: DesktopMethods, gate: ConsentGate, service: AgentService, environment: [String: String],
    consentTimeout: Duration, signIn: @escaping AgentLaunch.SignIn, log: @escaping @Sendable (String) -> Void
  ) -> AgentBusService? {
    let bus: AgentBusService
    do {
      bus = try AgentBusService(methods: desktop, log: log)
    } catch {
      log("no D-Bus API: \(error.message)")
      return nil
    }
    let notifications = DesktopNotifications(service: bus)
    do {
      try bus.start()
    } catch {
      log("no D-Bus API: \(error.message)")
      bus.stop()
      return nil
    }
    gate.askWith { application, group, account in
      let question = consentQuestion(
        application: application, group: group, account: account, reported: ReportedProgram.asking)
      guard
        let answer = await notifications.ask(
          summary: question.summary, body: question.body, actions: [("allow", "Allow"), ("deny", "Deny")],
          timeout: consentTimeout)
      else { return .notAsked }
      switch answer {
      case .answered("allow"): return .allowed
      case .answered("deny"): return .denied
      default: return .unanswered
      }
    }
    let signInPrompt = SignInPrompt(
      notices: SignInNotices(clock: gate.clock),
      show: { summary, body, actions, answered in
        notifications.show(summary: summary, body: body, actions: actions, critical: true, answered: answered)
      }, signIn: signIn)
    service.observe(
      AgentService.Observers(
        accountChanged: { group, key, account in
          bus.emit("AccountChanged", .tuple([.string(group), .string(account)])) { gate.sees($0, group: group, key) }
        },
        needsSignIn: { group, key, account in
          bus.emit("NeedsSignIn", .tuple([.string(group), .string(account)])) { gate.sees($0, group: group, key) }
          log("\(account) (group \(group)) needs a sign-in")
          signInPrompt.needsSignIn(group: group, account: account)
        }),
      groups: [environment["TOKENCTL_GROUP"].flatMap { $0.isEmpty ? nil : $0 } ?? Account.defaultGroup])
    log("on the session bus as \(AgentBusInterface.busName)")
    return bus
  }

  /// The consent notification's words: the application named as the user knows it, and
  /// as `tokenctl allow` takes it. For a forwarded host, the host is who asks; the program
  /// there is only what the host reports (`reported`), quoted and said to be so, since
  /// nothing here can check it.
  static func consentQuestion(
    application: PeerApplication, group: String, account: String, reported: ReportedProgram?
  ) -> (summary: String, body: String) {
    let (program, who): (String, String)
    switch application.identity {
    case .executable(let path): (program, who) = (path.split(separator: "/").last.map(String.init) ?? path, path)
    case .flatpak(let id): (program, who) = (id.rawValue, "The Flatpak app \(id) (\(application.name))")
    case .host(let host):
      (program, who) = ("\(host) (over ssh)", "The host \(host), which you forwarded the agent to over ssh,")
    }
    var summary = "\(program) asks for a token of \(account)"
    var body = "\(who) wants the access token of \(account) (group \(group)) from tokenctl. "
    if application.isHost, let reported {
      summary += " for \(reported)"
      body += "The program asking is \(reported), as the host reports it (unchecked). "
    }
    body += "Allow it only if you trust \(application.isHost ? "that host" : "this program") with that account."
    return (summary, body)
  }

  /// The notification that an account needs a sign-in, whose "Sign in" starts one through
  /// the command line's `signIn`; at most once a day per account (``SignInNotices``).
  struct SignInPrompt: Sendable {
    /// Shows a critical notification with `actions` (key, label), calling `answered` with
    /// the key of the action the user took, or nil when it was closed.
    typealias Show =
      @Sendable (
        _ summary: String, _ body: String, _ actions: [(key: String, label: String)],
        _ answered: @escaping @Sendable (String?) -> Void
      ) -> Void

    let notices: SignInNotices
    let show: Show
    let signIn: AgentLaunch.SignIn

    /// Tells the user that `account` of `group` needs a sign-in, unless told today.
    func needsSignIn(group: String, account: String) {
      guard notices.due(group: group, account: account) else { return }
      show(
        "Sign in again to \(account)",
        "The server no longer accepts the sign-in of \(account) (group \(group)). "
          + "Programs that use it get no token until you sign in again.",
        [("sign-in", "Sign in")]
      ) { [signIn] action in
        guard action == "sign-in" else { return }
        signIn(account, group)
      }
    }
  }

  /// One sign-in notification per account a day, however often a refresh fails, a day
  /// on the agent's clock.
  final class SignInNotices: Sendable {
    /// A day: one reminder a day is enough to be seen, and few enough not to nag.
    static let interval: Double = 86_400
    private let clock: any WallClock
    private let shown = Mutex<[String: Date]>([:])

    init(clock: any WallClock) { self.clock = clock }

    /// Whether the notification for `account` of `group` is due now; if so, it counts as shown.
    func due(group: String, account: String) -> Bool {
      let now = clock.now
      return shown.withLock { shown in
        let key = "\(group)\n\(account)"
        if let last = shown[key], now.timeIntervalSince(last) < Self.interval { return false }
        shown[key] = now
        return true
      }
    }
  }
}
