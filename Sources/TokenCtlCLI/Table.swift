/// Left-aligned columns for people; scripts use `--json`.
struct Table {
  var header: [String]
  var rows: [[String]] = []

  /// `widths` are measured on the plain text so that colour codes added by `style` do
  /// not break the alignment, and in terminal columns (``DisplayWidth``), so that a name
  /// in Chinese, Japanese or Korean does not push the next column out of line.
  func render(style: Style, color: (_ row: Int, _ column: Int, _ text: String) -> String = { $2 }) -> String {
    let widths = header.indices.map { column in
      ([header] + rows).map { DisplayWidth.of($0[column]) }.max() ?? 0
    }
    func line(_ cells: [String], _ decorate: (Int, String) -> String) -> String {
      cells.enumerated().map { column, text in
        let padding =
          column == cells.count - 1
          ? "" : String(repeating: " ", count: widths[column] - DisplayWidth.of(text) + 2)
        return decorate(column, text) + padding
      }.joined()
    }
    var lines = [line(header) { style.bold($1) }]
    for (index, row) in rows.enumerated() {
      lines.append(line(row) { color(index, $0, $1) })
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
