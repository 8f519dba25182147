import Foundation
import NativeAppSupport
import TestSupport
import Testing

/// The launcher starting real programs: shell scripts standing for a browser and for
/// `xdg-open`, which record how they were started.
@Suite(.timeLimit(.minutes(1))) struct BrowserLauncherTests {
  /// Characters a shell would act on; the launcher uses none.
  static let url = "https://idp.example/authorize?client_id=a&state=x;y|z&q=$(touch /tmp/pwned)`id`'\"*"

  /// A directory holding the fake programs, which is the whole `PATH` they are found in.
  struct Bench {
    let directory: TemporaryDirectory
    let environment: [String: String]

    init() async throws {
      directory = try TemporaryDirectory()
      // Records its arguments, environment, standard input, signal state, process group
      // and open files, then marks the record complete.
      let recorder = """
        out="$RECORD_DIR/${0##*/}"
        # Builtins only, before anything forks: while it waits for a child, dash blocks
        # every signal itself.
        while read -r line; do
          case $line in SigBlk* | SigIgn*) echo "$line" ;; esac
        done < /proc/$$/status > "$out.signals"
        printf '%s\\n' "$@" > "$out.args"
        /usr/bin/env > "$out.env"
        /usr/bin/readlink /proc/$$/fd/0 > "$out.stdin"
        /usr/bin/cat /proc/$$/stat > "$out.stat"
        for fd in /proc/$$/fd/*; do /usr/bin/readlink "$fd"; done > "$out.files"
        echo "printed by ${0##*/}"
        echo "complained by ${0##*/}" >&2
        : > "$out.done"

        """
      try await directory.script("fake-browser", recorder)
      try await directory.script("xdg-open", recorder)
      try await directory.script("failing-browser", "exit 3\n")
      environment = ["PATH": directory.url.path, "RECORD_DIR": directory.url.path, "HOME": "/nonexistent"]
    }

    /// What `program` recorded, once it has.
    func record(_ program: String) async throws -> Record {
      let done = directory.path("\(program).done")
      for _ in 0..<1000 where !FileManager.default.fileExists(atPath: done) {
        try await Task.sleep(for: .milliseconds(10))
      }
      return try Record(directory: directory, program: program)
    }

    func ran(_ program: String) -> Bool { FileManager.default.fileExists(atPath: directory.path("\(program).args")) }
  }

  struct Record {
    var arguments: [String]
    var environment: [String: String]
    var stdin: String
    var signals: String
    var stat: String
    var files: [String]

    init(directory: TemporaryDirectory, program: String) throws {
      func read(_ suffix: String) throws -> String {
        try String(contentsOfFile: directory.path("\(program).\(suffix)"), encoding: .utf8)
      }
      arguments = try read("args").split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
      environment = Dictionary(
        try read("env").split(separator: "\n").map {
          let parts = $0.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
          return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }, uniquingKeysWith: { first, _ in first })
      stdin = try read("stdin").trimmingCharacters(in: .newlines)
      signals = try read("signals")
      stat = try read("stat")
      files = try read("files").split(separator: "\n").map(String.init)
    }
  }

  @Test func percentSStandsForTheURLAndPercentPercentForPercent() async throws {
    let bench = try await Bench()
    var environment = bench.environment
    environment["BROWSER"] = "fake-browser  --new-window %s --zoom=100%% --literal=%d"
    #expect(BrowserLauncher(environment: environment).open(Self.url) == "fake-browser")
    let record = try await bench.record("fake-browser")
    #expect(record.arguments == ["--new-window", Self.url, "--zoom=100%", "--literal=%d"])
    #expect(!FileManager.default.fileExists(atPath: "/tmp/pwned"))
  }

  @Test func withoutPercentSTheURLComesLast() async throws {
    let bench = try await Bench()
    var environment = bench.environment
    environment["BROWSER"] = "fake-browser --private"
    #expect(BrowserLauncher(environment: environment).open(Self.url) == "fake-browser")
    #expect(try await bench.record("fake-browser").arguments == ["--private", Self.url])
  }

  @Test func entriesThatCannotStartAreSkipped() async throws {
    let bench = try await Bench()
    var environment = bench.environment
    environment["BROWSER"] = "/nonexistent/browser %s::no-such-browser:\(bench.directory.path("fake-browser"))"
    #expect(BrowserLauncher(environment: environment).open(Self.url) == bench.directory.path("fake-browser"))
    #expect(try await bench.record("fake-browser").arguments == [Self.url])
    try await Task.sleep(for: .milliseconds(200))
    #expect(!bench.ran("xdg-open"))
  }

  @Test func xdgOpenWhenBrowserIsUnsetOrUnusable() async throws {
    for browser in [nil, "", "no-such-browser %s"] {
      let bench = try await Bench()
      var environment = bench.environment
      environment["BROWSER"] = browser
      #expect(BrowserLauncher(environment: environment).open(Self.url) == "xdg-open")
      #expect(try await bench.record("xdg-open").arguments == [Self.url])
    }
  }

  /// A `BROWSER` that fails at once (a misspelt program behind a wrapper, a browser with
  /// no display) does not count as opened: the next command is tried, and with none left
  /// the caller is told that no browser started.
  @Test func aBrowserThatFailsAtOnceIsNotCountedAsOpened() async throws {
    let bench = try await Bench()
    var environment = bench.environment
    environment["BROWSER"] = "failing-browser"
    #expect(BrowserLauncher(environment: environment).open(Self.url) == "xdg-open")
    environment["PATH"] = bench.directory.path("nothing-else") + ":" + bench.directory.url.path
    try FileManager.default.removeItem(atPath: bench.directory.path("xdg-open"))
    #expect(BrowserLauncher(environment: environment).open(Self.url) == nil)
  }

  /// A browser still running after the failure window counts as opened, and is not
  /// waited for.
  @Test func aBrowserThatKeepsRunningCountsAsOpened() async throws {
    let bench = try await Bench()
    try await bench.directory.script("lasting-browser", "/usr/bin/sleep 5\n")
    var environment = bench.environment
    environment["BROWSER"] = "lasting-browser"
    let started = Date()
    #expect(BrowserLauncher(environment: environment).open(Self.url) == "lasting-browser")
    #expect(Date().timeIntervalSince(started) < 4)
  }

  @Test func nothingToStart() throws {
    let empty = try TemporaryDirectory()
    #expect(BrowserLauncher(environment: ["PATH": empty.url.path, "BROWSER": "nope"]).open(Self.url) == nil)
  }

  @Test func secretsStayOutOfTheBrowsersEnvironment() async throws {
    let bench = try await Bench()
    var environment = bench.environment
    environment["TOKENCTL_CLIENT_SECRET"] = "s3cret"
    environment["TOKENCTL_REFRESH_TOKEN"] = "s3cret"
    environment["TOKENCTL_CONFIG"] = "/etc/tokenctl.toml"
    environment["LANG"] = "C.UTF-8"
    BrowserLauncher(environment: environment).open(Self.url)
    let record = try await bench.record("xdg-open")
    #expect(record.environment["TOKENCTL_CLIENT_SECRET"] == nil)
    #expect(record.environment["TOKENCTL_REFRESH_TOKEN"] == nil)
    #expect(record.environment["TOKENCTL_CONFIG"] == "/etc/tokenctl.toml")
    #expect(record.environment["LANG"] == "C.UTF-8")
    #expect(record.environment["PATH"] == bench.directory.url.path)
  }

  @Test func theBrowserStartsClean() async throws {
    let bench = try await Bench()
    // A descriptor of ours without close-on-exec must not reach the browser.
    let marker = bench.directory.path("marker")
    let leaky = open(marker, O_CREAT | O_WRONLY, 0o600)
    defer { close(leaky) }
    BrowserLauncher(environment: bench.environment).open(Self.url)
    let record = try await bench.record("xdg-open")
    #expect(record.stdin == "/dev/null")
    #expect(!record.files.contains(marker))
    // Test threads block signals; the browser must not inherit that, nor ignored ones.
    // Signals 32 and 33 are glibc's own, which posix_spawn leaves alone and glibc in the
    // browser sets up again.
    let masks = Dictionary(
      uniqueKeysWithValues: record.signals.split(separator: "\n").map {
        let parts = $0.split(separator: "\t")
        return (String(parts[0]), UInt64(parts[1], radix: 16)!)
      })
    #expect(masks["SigBlk:"] == 0)
    #expect(masks["SigIgn:"].map { $0 & ~0x1_8000_0000 } == 0)
    // Its own process group: fields after the command name are state, ppid, pgrp.
    let fields = record.stat.split(separator: ")").last!.split(separator: " ")
    #expect(String(fields[2]) == record.stat.split(separator: " ")[0])
  }

  @Test func outputGoesWhereAsked() async throws {
    let bench = try await Bench()
    let log = bench.directory.path("browser.log")
    BrowserLauncher(environment: bench.environment, output: .file(log)).open(Self.url)
    _ = try await bench.record("xdg-open")
    #expect(try String(contentsOfFile: log, encoding: .utf8) == "printed by xdg-open\ncomplained by xdg-open\n")
  }

  @Test func theBrowserIsReaped() async throws {
    let bench = try await Bench()
    BrowserLauncher(environment: bench.environment).open(Self.url)
    _ = try await bench.record("xdg-open")
    var children: [String] = []
    for _ in 0..<300 {
      children = Self.children(named: "xdg-open")
      if children.isEmpty { break }
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(children.isEmpty, "still there (Z is a zombie): \(children)")
  }

  /// The states of our child processes whose command is `name`.
  static func children(named name: String) -> [String] {
    let me = String(getpid())
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry in
      guard entry.allSatisfy(\.isNumber),
        let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
        let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
      else { return nil }
      let fields = stat[stat.index(after: close)...].split(separator: " ")
      guard stat[stat.index(after: open)..<close] == name, fields.count > 1, fields[1] == me else { return nil }
      return "\(entry) \(fields[0])"
    }
  }
}
