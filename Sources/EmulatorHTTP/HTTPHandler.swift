/// What the server calls for each request. Implementations must be thread-safe: requests from
/// different connections run concurrently.
public protocol HTTPHandler: Sendable {
  /// The largest body accepted for this head, asked before the body is read, so an oversized
  /// request is refused with 413 without reading it.
  func bodyLimit(for head: HTTPRequestHead) -> Int

  /// Answers a complete request. Runs on one of the server's blocking lanes, so it may do file I/O,
  /// unless `handlesInline` said it does none.
  func handle(_ request: HTTPRequest) -> HTTPResponse

  /// True when `handle` will answer this request from memory, without blocking: it then runs on
  /// the connection's own queue, saving two thread hand-offs.
  func handlesInline(_ head: HTTPRequestHead) -> Bool
}

extension HTTPHandler {
  public func bodyLimit(for head: HTTPRequestHead) -> Int { Int.max }

  public func handlesInline(_ head: HTTPRequestHead) -> Bool { false }

  /// The response sent, with `Connection: close`, for a request that could not be parsed.
  public func errorResponse(for error: HTTPParseError) -> HTTPResponse {
    HTTPResponse.plainJSONError(status: error.status, message: error.message)
  }
}

extension HTTPResponse {
  /// `{"error":{"code":N,"message":"..."}}`, the smallest error body every client here understands.
  public static func plainJSONError(status: Int, message: String) -> HTTPResponse {
    var escaped = ""
    for scalar in message.unicodeScalars {
      switch scalar {
      case "\"": escaped += "\\\""
      case "\\": escaped += "\\\\"
      case _ where scalar.value < 0x20:
        escaped +=
          "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
          + String(scalar.value, radix: 16)
      default: escaped.unicodeScalars.append(scalar)
      }
    }
    let body = "{\"error\":{\"code\":\(status),\"message\":\"\(escaped)\"}}"
    return HTTPResponse(
      status: status, headers: ["content-type": "application/json; charset=UTF-8"], body: Array(body.utf8))
  }
}
