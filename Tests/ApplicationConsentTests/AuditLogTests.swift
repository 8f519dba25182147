import ApplicationConsent
import Foundation
import NativeAppSupport
import TestSupport
import Testing

/// The audit log's lines, its escaping against hostile names, and its rotation.
@Suite struct AuditLogTests {
  static let time = Date(timeIntervalSince1970: 1_795_493_106)  // 2026-11-24T04:05:06Z

  let home: TemporaryDirectory
  let directories: XDGDirectories

  init() throws {
    home = try TemporaryDirectory()
    directories = XDGDirectories(environment: ["HOME": home.url.path, "XDG_STATE_HOME": home.path("state")])
  }

  var file: String { directories.state + "/audit.log" }

  func lines(_ path: String? = nil) throws -> [Substring] {
    try String(contentsOfFile: path ?? file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
      .dropLast().map { $0 }
  }

  /// A line's `key=value` fields after the time and the kind, each value unescaped.
  func fields(_ line: Substring) -> [String: String] {
    var result: [String: String] = [:]
    for field in line.split(separator: " ").dropFirst(2) {
      let parts = field.split(separator: "=", maxSplits: 1)
      result[String(parts[0])] = String(parts[1]).removingPercentEncoding
    }
    return result
  }

  @Test func anEventIsOneLineInAPrivateFile() throws {
    let log = AuditLog(directories: directories)
    log.record(
      AuditEvent(
        time: Self.time, kind: .token, application: "/usr/bin/python3.11", group: "default", account: "github:ada",
        via: .dbus))
    log.record(
      AuditEvent(
        time: Self.time, kind: .refused, application: "/usr/bin/perl", group: "work", via: .socket,
        reason: "not allowed"))
    #expect(
      try lines() == [
        "2026-11-24T04:05:06Z token app=/usr/bin/python3.11 group=default account=github:ada via=dbus",
        "2026-11-24T04:05:06Z refused app=/usr/bin/perl group=work via=socket reason=not%20allowed",
      ])
    var info = stat()
    #expect(lstat(file, &info) == 0 && info.st_mode & 0o7777 == 0o600)
  }

  @Test func aHostileNameCannotForgeALineOrAField() throws {
    let hostile = "evil\n2026-11-24T04:05:06Z allowed app=/usr/bin/evil group=default via=cli account=x=y %41 é\u{1B}"
    let log = AuditLog(directories: directories)
    log.record(
      AuditEvent(time: Self.time, kind: .token, application: hostile, group: hostile, account: hostile, via: .dbus))
    let lines = try lines()
    #expect(lines.count == 1)
    let line = try #require(lines.first)
    #expect(line.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F })
    #expect(line.split(separator: " ").count == 6)
    #expect(line.hasPrefix("2026-11-24T04:05:06Z token app=evil%0A2026-11-24T04:05:06Z%20allowed%20app%3D"))
    #expect(fields(line) == ["app": hostile, "group": hostile, "account": hostile, "via": "dbus"])
  }

  @Test func theLogRotatesAtItsLimitKeepingThePreviousFile() throws {
    let log = AuditLog(directories: directories, sizeLimit: 350)
    for index in 0..<12 {
      log.record(AuditEvent(time: Self.time, kind: .token, application: "/opt/app\(index)", group: "g", via: .cli))
    }
    // 57 or 58 bytes a line: six fit in 350.
    let current = try lines(), previous = try lines(file + ".1")
    #expect(previous.count == 6 && current.count == 6)
    #expect(previous.first?.contains("app=/opt/app0 ") == true && current.last?.contains("app=/opt/app11 ") == true)
    log.record(AuditEvent(time: Self.time, kind: .token, application: "/opt/last", group: "g", via: .cli))
    #expect(try lines(file + ".1").first?.contains("app=/opt/app6 ") == true)
    #expect(try lines().count == 1)
    var info = stat()
    #expect(lstat(file + ".1", &info) == 0 && info.st_mode & 0o7777 == 0o600)
  }

  /// A log others may read or write is refused, not tightened, as every file and folder
  /// of tokenctl's is (FilePolicy): what they read or wrote in it stays, and a quiet chmod
  /// would hide that it happened.
  @Test(arguments: [0o644, 0o620])
  func aLogOpenToOthersIsRefusedNotTightened(mode: Int) throws {
    let warnings = ApplicationGrantsTests.Warnings()
    let log = AuditLog(directories: directories, warn: { warnings.add($0) })
    log.record(AuditEvent(time: Self.time, kind: .token, application: "/x", group: "g", via: .cli))
    #expect(chmod(file, mode_t(mode)) == 0)
    log.record(AuditEvent(time: Self.time, kind: .token, application: "/y", group: "g", via: .cli))
    var info = stat()
    #expect(lstat(file, &info) == 0 && info.st_mode & 0o7777 == mode_t(mode))
    #expect(try lines().count == 1)
    #expect(
      warnings.all.count == 1
        && warnings.all[0].contains("is open to other users (mode \(String(mode, radix: 8)))")
        && warnings.all[0].hasPrefix("could not write the audit log"), "\(warnings.all)")
  }

  @Test func aFailureIsAWarningNotAnError() throws {
    // The state directory cannot be made: a file stands where it should be.
    try "".write(toFile: home.path("state"), atomically: false, encoding: .utf8)
    let warnings = ApplicationGrantsTests.Warnings()
    AuditLog(directories: directories, warn: { warnings.add($0) })
      .record(AuditEvent(time: Self.time, kind: .token, application: "/x", group: "g", via: .cli))
    #expect(warnings.all.count == 1 && warnings.all[0].hasPrefix("could not write the audit log"), "\(warnings.all)")
  }
}
