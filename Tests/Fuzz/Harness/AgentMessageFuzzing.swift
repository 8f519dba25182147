import AgentProtocol

/// The agent's protocol (tokenctl-agent(1)), as the agent reads a request and a client an
/// answer: a frame's payload.
enum AgentMessageFuzzing {
  /// Labels: `message` (well formed), `accounts` (an `accounts` answer whose records read),
  /// `error` (an `error` answer carrying a core error), `refused`.
  static func run(_ bytes: [UInt8]) -> String {
    let message: AgentMessage
    do {
      message = try AgentMessage(payload: bytes)
    } catch {
      _ = error.description
      return "refused"
    }
    // Whatever reads must frame and read back as the same message: a value must never
    // smuggle in a field or a line of its own.
    let framed = message.framed()
    precondition(AgentMessage.payloadLength(framed.prefix(4)) == framed.count - 4, "a frame's length is wrong")
    guard let again = try? AgentMessage(payload: framed.dropFirst(4)) else {
      preconditionFailure("a framed agent message does not read")
    }
    precondition(again == message, "an agent message changed through framing")
    _ = message.context
    if let records = message.accountRecords, message.kind == AgentMessage.Answer.accounts {
      // Records that read must write back to the same records.
      let rewritten = AgentMessage(listings: records)
      precondition(rewritten.accountRecords == records, "account records changed through writing")
      return "accounts"
    }
    if message.error != nil { return "error" }
    return "message"
  }
}
