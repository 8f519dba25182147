import Foundation
import Testing

/// The architecture table of docs/architecture.md is true, so that a newcomer can trust
/// it to say where a change belongs: a row for every target of Package.swift, and each
/// row's imports are the target's dependencies, no more and no fewer (other packages'
/// products included; what is not a target or product, such as "glibc", is free text).
@Suite struct ArchitectureTableTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../..").standardizedFileURL

  /// Each non-test target of the manifest with the targets and products it depends on.
  static func targets() throws -> [String: Set<String>] {
    let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
    var targets: [String: Set<String>] = [:]
    let declaration = #/\.(?:target|executableTarget)\(\s*name: "([A-Za-z-]+)"/#
    let starts = manifest.matches(of: declaration)
    for (index, match) in starts.enumerated() {
      let end = index + 1 < starts.count ? starts[index + 1].range.lowerBound : manifest.endIndex
      let body = manifest[match.range.upperBound..<end]
      var dependencies: Set<String> = []
      if let list = body.firstMatch(of: #/dependencies: \[((?:[^\[\]]|\[[^\]]*\])*)\]/#) {
        let text = String(list.1).split(separator: "\n").map { $0.split(separator: "//").first ?? "" }.joined()
        for name in text.matches(of: #/"([A-Za-z-]+)"/#) where !name.1.contains("-") || name.1 == "swift-crypto" {
          dependencies.insert(String(name.1))
        }
        // `.product(name: "Crypto", package: "swift-crypto")`: the product is the import.
        dependencies.subtract(["swift-crypto", "swift-argument-parser"])
      }
      targets[String(match.1)] = dependencies
    }
    return targets
  }

  /// The table's rows: the targets each names (first cell) and the imports (last cell).
  static func rows() throws -> [(targets: [String], imports: String)] {
    let document = try String(
      contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
    let section = try #require(document.range(of: "## Targets")).upperBound
    var rows: [(targets: [String], imports: String)] = []
    for line in document[section...].split(separator: "\n").drop(while: { !$0.hasPrefix("| target") }).dropFirst(2) {
      guard line.hasPrefix("|") else { break }
      let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
        $0.trimmingCharacters(in: .whitespaces)
      }
      let names = cells[1].matches(of: #/`([A-Za-z-]+)`/#).map { String($0.1) }
      rows.append((names, cells[cells.count - 2]))
    }
    return rows
  }

  @Test func everyTargetHasARowWithItsImports() throws {
    let targets = try Self.targets()
    #expect(targets.count > 25 && targets["TokenAgent"]?.contains("AgentBus") == true, "\(targets)")
    let rows = try Self.rows()
    var problems: [String] = []
    let known = Set(targets.keys).union(["Crypto", "CryptoExtras", "ArgumentParser"])
    for (name, dependencies) in targets.sorted(by: { $0.key < $1.key }) {
      guard let row = rows.first(where: { $0.targets.contains(name) }) else {
        problems.append("\(name): no row")
        continue
      }
      let listed = Set(
        row.imports.split(whereSeparator: { ", ();:".contains($0) }).map(String.init).filter(known.contains))
      // A row of several targets (the account plugins) lists what they all import.
      if listed != dependencies && row.targets.count == 1 {
        problems.append(
          "\(name): the table says \(listed.sorted()), Package.swift \(dependencies.sorted())")
      }
    }
    #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
  }
}
