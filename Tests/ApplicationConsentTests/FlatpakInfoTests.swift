import ApplicationConsent
import Foundation
import NativeAppSupport
import TestSupport
import Testing

/// Flatpak app ids, the names consent gives applications, and `/.flatpak-info` as a
/// sandbox holds it: parsed as a keyfile, and opened only when Flatpak could have made it.
@Suite struct FlatpakInfoTests {
  @Test(arguments: [
    "org.example.App", "org.example.my-app", "com.github.user_1.Tool", "org.gnome.Platform", "_a.b.c",
    "a.b." + String(repeating: "c", count: 251),
  ])
  func flatpakAcceptsTheseIDs(id: String) {
    #expect(FlatpakAppID(id)?.rawValue == id)
  }

  @Test(arguments: [
    "", "org.example", "org..App", ".org.example.App", "org.example.App.", "org.1example.App", "org.ex-ample.App",
    "org.example.App/x", "org.example.Äpp", "org.example.App ", "org:example.App.x", "org.example.A\\pp",
    "a.b." + String(repeating: "c", count: 252),
  ])
  func flatpakRefusesTheseIDs(id: String) {
    #expect(FlatpakAppID(id) == nil)
  }

  @Test func anApplicationHasOneNameEitherWay() throws {
    let app = try #require(FlatpakAppID("org.example.App"))
    #expect(ApplicationIdentity.flatpak(app).name == "flatpak:org.example.App")
    #expect(ApplicationIdentity(name: "flatpak:org.example.App") == .flatpak(app))
    #expect(ApplicationIdentity(name: "/usr/bin/python3.11") == .executable("/usr/bin/python3.11"))
    #expect(ApplicationIdentity.executable("/usr/bin/python3.11").name == "/usr/bin/python3.11")
    for name in ["flatpak:org.example", "flatpak:", "python3", "", "flatpak:/usr/bin/x"] {
      #expect(ApplicationIdentity(name: name) == nil, "\(name)")
    }
    #expect(ApplicationIdentity.isFlatpakName("flatpak:what.ever") && !ApplicationIdentity.isFlatpakName("/flatpak:"))
  }

  /// What flatpak 1.14 writes for an app (flatpak_run_add_app_info_args), trimmed.
  static let appInfo = """
    [Application]
    name=org.example.App
    runtime=runtime/org.freedesktop.Platform/x86_64/23.08

    [Instance]
    instance-id=3141592653
    app-path=/var/lib/flatpak/app/org.example.App/x86_64/stable/active/files
    flatpak-version=1.14.4
    session-bus-proxy=true

    [Context]
    shared=network;ipc;
    sockets=x11;wayland;
    """

  @Test(arguments: [
    (appInfo, "org.example.App"),
    ("# made by flatpak\n[Application]\r\nname = org.example.App\r\n", "org.example.App"),
    ("[Runtime]\nname=org.gnome.Sdk\n[Application]\nname=org.example.App\n", "org.gnome.Sdk"),
  ])
  func theAppIDIsTheApplicationsName(text: String, id: String) {
    #expect(FlatpakInfo.appID(in: Array(text.utf8)) == .success(FlatpakAppID(id)!))
  }

  @Test(arguments: [
    ("[Instance]\nname=org.example.App\n", FlatpakInfo.Problem.noAppID),
    ("[Application]\nruntime=x\n", .noAppID),
    ("[Runtime]\nruntime=x\n[Application]\nname=org.example.App\n", .noAppID),
    ("[Application]\nname=org.example\n", .invalidAppID),
    ("[Application]\nname=org.example.App;rm\n", .invalidAppID),
    ("name=org.example.App\n", .malformed),
    ("[Application]\nname org.example.App\n", .malformed),
    ("[Application]\nname=org.example.App\nname=org.example.Other\n", .malformed),
    ("[Application\nname=org.example.App\n", .malformed),
    ("[Application]\n=org.example.App\n", .malformed),
  ])
  func aFileThatNamesNoAppIsSaidSo(text: String, problem: FlatpakInfo.Problem) {
    #expect(FlatpakInfo.appID(in: Array(text.utf8)) == .failure(problem))
  }

  @Test func textThatIsNotUTF8IsMalformed() {
    #expect(
      FlatpakInfo.appID(in: Array("[Application]\nname=org.example.App\n#".utf8) + [0xFF]) == .failure(.malformed))
  }

  /// A directory standing in for a sandbox's root, and a descriptor of it, as the agent
  /// opens /proc/PID/root.
  final class Root {
    let directory: TemporaryDirectory
    var info: String { directory.path(".flatpak-info") }

    init() throws { directory = try TemporaryDirectory() }

    func appID() -> Result<FlatpakAppID, FlatpakInfo.Problem>? {
      let fd = open(directory.url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
      defer { close(fd) }
      return FlatpakInfo.appID(inRoot: fd)
    }

    func write(_ text: String, mode: mode_t = 0o600) throws {
      try text.write(toFile: info, atomically: false, encoding: .utf8)
      chmod(info, mode)
    }
  }

  @Test func aRootWithoutTheFileIsNoFlatpakSandbox() throws {
    #expect(try Root().appID() == nil)
  }

  @Test func theFileFlatpakMakesNamesTheApp() throws {
    let root = try Root()
    try root.write(Self.appInfo)
    #expect(root.appID() == .success(FlatpakAppID("org.example.App")!))
    // Read-only for everyone, as --ro-bind-data may leave it, is as good.
    chmod(root.info, 0o444)
    #expect(root.appID() == .success(FlatpakAppID("org.example.App")!))
  }

  /// A link is never followed: an absolute one would be resolved against the agent's
  /// root, and make it read any file of the host.
  @Test func aSymbolicLinkIsRefused() throws {
    let root = try Root()
    let elsewhere = root.directory.path("elsewhere")
    try Self.appInfo.write(toFile: elsewhere, atomically: false, encoding: .utf8)
    try FileManager.default.createSymbolicLink(atPath: root.info, withDestinationPath: elsewhere)
    #expect(root.appID() == .failure(.symbolicLink))
  }

  @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
    let root = try Root()
    #expect(mkfifo(root.info, 0o600) == 0)
    #expect(root.appID() == .failure(.notRegularFile))
  }

  @Test func aDirectoryIsRefused() throws {
    let root = try Root()
    try FileManager.default.createDirectory(atPath: root.info, withIntermediateDirectories: false)
    #expect(root.appID() == .failure(.notRegularFile))
  }

  @Test func aFileOthersMayWriteIsRefused() throws {
    let root = try Root()
    try root.write(Self.appInfo, mode: 0o620)
    #expect(root.appID() == .failure(.writableByOthers(0o620)))
  }

  @Test func aFileOfAnotherUserIsRefused() throws {
    // Only root can give a file away; as anyone else there is nothing to check.
    guard getuid() == 0 else { return }
    let root = try Root()
    try root.write(Self.appInfo)
    #expect(chown(root.info, 65534, 65534) == 0)
    #expect(root.appID() == .failure(.owner(65534)))
  }

  @Test func aHugeFileIsNotRead() throws {
    let root = try Root()
    try root.write(Self.appInfo + "\n#" + String(repeating: "x", count: FlatpakInfo.sizeLimit))
    #expect(root.appID() == .failure(.tooLarge))
  }
}
