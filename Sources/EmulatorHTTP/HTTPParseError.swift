/// A framing or syntax error in a request. The connection answers `status` once and closes.
public struct HTTPParseError: Error, Equatable, Sendable, CustomStringConvertible {
  public var status: Int
  public var message: String

  public init(_ status: Int, _ message: String) {
    self.status = status
    self.message = message
  }

  public var description: String { "\(status): \(message)" }
}
