import NativeAppSupport
import Testing

/// Where tokenctl keeps a grant journal: only in a runtime folder in memory, by the one
/// rule of ``JournalPlacement``.
@Suite struct JournalPlacementTests {
  static let ext4: UInt32 = 0xEF53
  static let overlayfs: UInt32 = 0x794C_7630

  struct Row: Sendable, CustomStringConvertible {
    var runtime: String?
    var filesystem: UInt32?
    var expected: JournalPlacement
    var description: String {
      "\(runtime ?? "no runtime folder") on \(filesystem.map { String($0, radix: 16) } ?? "?")"
    }
  }

  static let table: [Row] = [
    Row(runtime: nil, filesystem: nil, expected: .notKept(.noRuntimeFolder)),
    Row(
      runtime: "/run/user/1000/tokenctl", filesystem: 0x0102_1994,
      expected: .kept(folder: "/run/user/1000/tokenctl/journal", filesystem: .tmpfs)),
    Row(
      runtime: "/run/user/1000/tokenctl", filesystem: 0x8584_58F6,
      expected: .kept(folder: "/run/user/1000/tokenctl/journal", filesystem: .ramfs)),
    Row(runtime: "/tmp/run/tokenctl", filesystem: ext4, expected: .notKept(.notInMemory(filesystem: ext4))),
    Row(runtime: "/tmp/run/tokenctl", filesystem: overlayfs, expected: .notKept(.notInMemory(filesystem: overlayfs))),
    // statfs failed: nothing says it is in memory.
    Row(runtime: "/gone/tokenctl", filesystem: nil, expected: .notKept(.notInMemory(filesystem: nil))),
  ]

  @Test(arguments: table)
  func aJournalIsKeptOnlyInMemory(_ row: Row) {
    #expect(JournalPlacement.decide(runtime: row.runtime, filesystem: { _ in row.filesystem }) == row.expected)
  }

  /// XDGDirectories applies the rule to `XDG_RUNTIME_DIR`'s folder, and to nothing else.
  @Test func theDirectoriesTakeTheRuleForTheRuntimeFolder() {
    var asked: [String] = []
    let onDisk = XDGDirectories(environment: ["HOME": "/home/ada", "XDG_RUNTIME_DIR": "/run/user/1000"]) {
      asked.append($0)
      return Self.ext4
    }
    #expect(onDisk.journal == nil)
    #expect(onDisk.runtime == "/run/user/1000/tokenctl", "lock files stay in the runtime folder")
    #expect(asked == ["/run/user/1000/tokenctl"])
    let inMemory = XDGDirectories(environment: ["HOME": "/home/ada", "XDG_RUNTIME_DIR": "/run/user/1000"]) { _ in
      0x0102_1994
    }
    #expect(inMemory.journal == "/run/user/1000/tokenctl/journal")
    let unset = XDGDirectories(environment: ["HOME": "/home/ada"]) { _ in 0x0102_1994 }
    #expect(unset.journal == nil)
    #expect(unset.journalPlacement == .notKept(.noRuntimeFolder))
  }

  /// The real file systems: /dev/shm is a tmpfs, and a folder not made yet is on its
  /// nearest existing ancestor's.
  @Test func statfsReadsTheFolderOrItsNearestAncestor() {
    #expect(JournalPlacement.filesystemType(of: "/dev/shm") == JournalPlacement.MemoryFilesystem.tmpfs.rawValue)
    #expect(
      JournalPlacement.filesystemType(of: "/dev/shm/no-such-folder/tokenctl")
        == JournalPlacement.MemoryFilesystem.tmpfs.rawValue)
    #expect(JournalPlacement.filesystemType(of: "/proc") != JournalPlacement.MemoryFilesystem.tmpfs.rawValue)
  }
}
