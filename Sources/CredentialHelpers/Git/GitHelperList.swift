/// The credential helpers git asks about one URL, in the order it asks them.
///
/// As gitcredentials(7) ("Custom helpers") and git's `credential.c` decide it:
/// - git collects `credential.helper` and every `credential.<url>.helper` whose URL matches
///   the remote, in the order it reads its configuration (system, global, local, worktree,
///   command line; each file from top to bottom). A more specific URL does *not* come
///   first: unlike other URL-matched settings, every match counts, in file order.
/// - An empty value clears the helpers collected so far.
/// - For `get`, git asks them in turn and stops at the first that answers with a username
///   and a password: a helper before tokenctl that holds a credential for the host
///   (`store`, `cache`, a desktop keyring) answers instead, and tokenctl is never asked.
///
/// Whether an entry's URL matches is git's business (``entriesMatching(_:urlMatchOutput:)``); this type only
/// orders what matched.
public struct GitHelperList: Sendable {
  /// One `helper` line of git's configuration.
  public struct Entry: Sendable, Hashable {
    /// Where git read it: `system`, `global`, `local`, `worktree` or `command`.
    public var scope: String
    /// The URL of `credential.<url>.helper`, as written; nil for `credential.helper`.
    public var context: String?
    /// The helper: a name (`cache` runs `git credential-cache`), a path, or `!` and a
    /// shell command; empty to clear the list.
    public var value: String

    public init(scope: String, context: String?, value: String) {
      self.scope = scope
      self.context = context
      self.value = value
    }

    /// The configuration key, as `git config` takes it.
    public var key: String { "credential." + (context.map { $0 + "." } ?? "") + "helper" }

    /// Whether this line runs tokenctl's helper: `tokenctl` (what `tokenctl setup-git`
    /// writes), a path to `git-credential-tokenctl`, or a shell command running either.
    public var isTokenctl: Bool {
      let trimmed = value.drop { $0 == " " || $0 == "\t" }
      if trimmed.hasPrefix("!") {
        return trimmed.contains("git-credential-tokenctl") || trimmed.contains("tokenctl credential")
      }
      guard let program = trimmed.split(separator: " ").first else { return false }
      return program.contains("/")
        ? program.split(separator: "/").last == "git-credential-tokenctl" : program == "tokenctl"
    }
  }

  /// The helpers git asks, in order.
  public private(set) var helpers: [Entry] = []
  /// When git never asks tokenctl though a line of it applies: the empty lines that
  /// cleared it.
  public private(set) var clearingTokenctl: [Entry] = []

  /// The list from the lines that apply to the URL, in the order git read them.
  public init(_ entries: [Entry]) {
    for entry in entries {
      guard !entry.value.isEmpty else {
        if helpers.contains(where: \.isTokenctl) { clearingTokenctl.append(entry) }
        helpers.removeAll()
        continue
      }
      helpers.append(entry)
    }
    if helpers.contains(where: \.isTokenctl) { clearingTokenctl = [] }
  }

  /// The helpers git asks before tokenctl; nil when it never asks tokenctl.
  public var helpersBeforeTokenctl: [Entry]? {
    helpers.firstIndex(where: \.isTokenctl).map { Array(helpers[..<$0]) }
  }

  // MARK: Reading git's answers

  /// The pattern for `git config --get-regexp`: every helper line.
  public static let keyPattern = #"^credential\.(.+\.)?helper$"#

  /// The lines in `git config --null --show-scope --get-regexp` output (`SCOPE NUL KEY LF
  /// VALUE NUL` each), in git's order; a key git lowercased keeps its URL as written.
  public static func entries(parsing output: [UInt8]) -> [Entry] {
    let fields = output.split(separator: 0, omittingEmptySubsequences: false).map {
      String(decoding: $0, as: UTF8.self)
    }
    var entries: [Entry] = []
    var index = 0
    while index + 1 < fields.count {
      let scope = fields[index]
      let keyAndValue = fields[index + 1]
      index += 2
      // A key alone, without a newline, is a key with no `=` at all: a boolean true,
      // which is no helper.
      guard let newline = keyAndValue.firstIndex(of: "\n") else { continue }
      let key = keyAndValue[..<newline]
      let value = String(keyAndValue[keyAndValue.index(after: newline)...])
      guard key.lowercased().hasPrefix("credential."), key.lowercased().hasSuffix(".helper") else { continue }
      // `credential.helper` itself, where the prefix and the suffix share their dot.
      let context: String? =
        key.count <= "credential.helper".count
        ? nil : String(key.dropFirst("credential.".count).dropLast(".helper".count))
      entries.append(Entry(scope: scope, context: context, value: value))
    }
    return entries
  }

  /// The environment that has git's own URL matching judge the `entries` with a URL
  /// (`git config --get-urlmatch credential URL`): each becomes a command-line setting
  /// `credential.<url>.h<index>`, so that every one that matches is printed, not only the
  /// most specific. A URL without a scheme (`credential.example.com.helper`, which git
  /// matches against the host alone) is given the scheme of the URL asked about.
  public static func urlMatchSettings(_ entries: [Entry], scheme: String) -> [String: String] {
    var settings: [String: String] = [:]
    var count = 0
    for (index, entry) in entries.enumerated() {
      guard let context = entry.context else { continue }
      let url = context.contains("://") ? context : "\(scheme)://\(context)"
      settings["GIT_CONFIG_KEY_\(count)"] = "credential.\(url).h\(index)"
      settings["GIT_CONFIG_VALUE_\(count)"] = String(index)
      count += 1
    }
    settings["GIT_CONFIG_COUNT"] = String(count)
    return settings
  }

  /// The `entries` that apply to a URL: those without one, and those whose index git
  /// printed for ``urlMatchSettings(_:scheme:)`` (`credential.hINDEX INDEX` lines).
  public static func entriesMatching(_ entries: [Entry], urlMatchOutput: String) -> [Entry] {
    let matched = Set(
      urlMatchOutput.split(separator: "\n").compactMap { line in line.split(separator: " ").last.flatMap { Int($0) } })
    return entries.enumerated().filter { $0.element.context == nil || matched.contains($0.offset) }.map(\.element)
  }
}
