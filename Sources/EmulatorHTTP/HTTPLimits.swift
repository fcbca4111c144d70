/// Size limits applied while reading a request (PROTOCOL.md §8). Every limit is inclusive.
public struct HTTPLimits: Sendable, Equatable {
  /// The request line, without its CRLF. Longer: 414.
  public var maxRequestLineBytes: Int = 8 * 1024
  /// The whole header block (request line included). Larger: 431.
  public var maxHeaderBytes: Int = 64 * 1024
  /// The number of header fields. More: 431.
  public var maxHeaderCount: Int = 128
  /// The largest body any request may carry; a handler may set a lower limit per request. Larger: 413.
  public var maxBodyBytes: Int = 1 << 30

  public init() {}
}
