/// An HTTP response as a transport received it.
public struct HTTPResponse: Sendable, Hashable, CustomStringConvertible {
  public var status: Int
  /// Header fields; look them up with `header(_:)`, which ignores case.
  public var headers: [HTTPHeader]
  public var body: [UInt8]

  public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = []) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// The first value of the header named `name`, compared without regard to case.
  public func header(_ name: String) -> String? {
    let wanted = name.lowercased()
    return headers.first { $0.name.lowercased() == wanted }?.value
  }

  /// The media type of `Content-Type`, lowercased and without parameters.
  public var mediaType: String? {
    header("Content-Type").map {
      String(($0.split(separator: ";", maxSplits: 1).first ?? "").filter { $0 != " " && $0 != "\t" })
        .lowercased()
    }
  }

  // The body may hold tokens: describe the response by its status and size only.
  public var description: String { "HTTP \(status) (\(body.count) bytes)" }
}
