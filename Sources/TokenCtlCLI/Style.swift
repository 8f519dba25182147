/// Terminal styling, off unless output is a terminal and `NO_COLOR` is unset
/// (https://no-color.org).
struct Style {
  let enabled: Bool

  init(context: CLIContext) {
    enabled = context.output.isTerminal && context.environment["NO_COLOR"].map(\.isEmpty) ?? true
  }

  func bold(_ text: String) -> String { wrap(text, "1") }
  func green(_ text: String) -> String { wrap(text, "32") }
  func yellow(_ text: String) -> String { wrap(text, "33") }
  func red(_ text: String) -> String { wrap(text, "31") }

  private func wrap(_ text: String, _ code: String) -> String {
    enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
  }
}
