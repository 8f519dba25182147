import Foundation
import Testing
import TokenCtlFuzzing

/// Replays the committed fuzz seeds (`Tests/Fuzz/Corpus/<target>/`) through the bodies of
/// the libFuzzer targets, so that `make test` catches a seed that crashes, and a seed that
/// no longer reads as what it was written to be: each file name starts with the label its
/// target must return (`token-google.http` is a token response).
@Suite struct FuzzSeedTests {
  struct Seed: CustomTestStringConvertible, Sendable {
    var target: FuzzTarget
    var file: URL
    var testDescription: String { "\(target.rawValue)/\(file.lastPathComponent)" }
  }

  static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fuzz/Corpus")

  static func files(of target: FuzzTarget) -> [URL] {
    let directory = corpus.appendingPathComponent(target.rawValue)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.sorted().map { directory.appendingPathComponent($0) }
  }

  static let seeds = FuzzTarget.allCases.flatMap { target in files(of: target).map { Seed(target: target, file: $0) } }

  @Test(arguments: FuzzTarget.allCases)
  func everyTargetHasSeedsForItsMainOutcome(target: FuzzTarget) {
    let names = Self.files(of: target).map(\.lastPathComponent)
    #expect(names.count >= 5, "too few seeds in \(Self.corpus.path)/\(target.rawValue)")
    #expect(names.contains { !$0.hasPrefix("refused-") }, "only refused seeds for \(target.rawValue)")
  }

  @Test(arguments: seeds)
  func seedReadsAsItsNameSays(seed: Seed) throws {
    let bytes = try [UInt8](Data(contentsOf: seed.file))
    let label = seed.target.run(bytes)
    #expect(seed.file.lastPathComponent.hasPrefix(label + "-"), "read as \(label)")
  }
}
