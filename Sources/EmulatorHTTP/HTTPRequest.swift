/// The HTTP version of a request; only HTTP/1.0 and HTTP/1.1 are served.
public enum HTTPVersion: Sendable, Equatable {
  case http10
  case http11
}

/// The parsed request line and header block.
public struct HTTPRequestHead: Sendable {
  /// The method token exactly as sent (methods are case-sensitive, RFC 9110 §9.1).
  public var method: String
  /// The request target as sent, still percent-encoded (origin-form; absolute-form is reduced to
  /// its path and query).
  public var target: String { didSet { queryMark = Self.queryMark(in: target) } }
  public var version: HTTPVersion
  public var headers: HTTPHeaders
  /// Where the target's first `?` is, found once (every layer asks for the path and the query).
  private var queryMark: String.Index?

  public init(method: String, target: String, version: HTTPVersion = .http11, headers: HTTPHeaders = [:]) {
    self.method = method
    self.target = target
    self.version = version
    self.headers = headers
    self.queryMark = Self.queryMark(in: target)
  }

  /// Found in the target's contiguous bytes (the generic search over `String.UTF8View` costs
  /// about a thousand instructions, on every request).
  private static func queryMark(in target: String) -> String.Index? {
    let utf8 = target.utf8
    switch utf8.withContiguousStorageIfAvailable({ $0.firstIndex(of: UInt8(ascii: "?")) }) {
    case .some(let offset?): return utf8.index(utf8.startIndex, offsetBy: offset)
    case .some(nil): return nil
    case nil: return utf8.firstIndex(of: UInt8(ascii: "?"))
    }
  }

  /// The raw path: the target up to `?`, not decoded.
  public var rawPath: Substring {
    if let mark = queryMark { return target[..<mark] }
    return target[...]
  }

  /// The raw query: the target after the first `?`, not decoded; empty when there is none.
  public var rawQuery: Substring {
    if let mark = queryMark { return target[target.utf8.index(after: mark)...] }
    return ""
  }

  /// Whether the connection may be reused after this request (RFC 9112 §9.3).
  public var keepAlive: Bool {
    switch version {
    case .http11: return !headers.containsToken("connection", "close")
    case .http10: return headers.containsToken("connection", "keep-alive")
    }
  }
}

/// A complete request: head and the whole (de-chunked) body.
public struct HTTPRequest: Sendable {
  public var head: HTTPRequestHead
  /// The body, unless it was spooled to `bodyFile`.
  public var body: [UInt8]
  /// A large body, written to disk as it arrived (`body` is then empty).
  public var bodyFile: SpooledFile?

  public init(head: HTTPRequestHead, body: [UInt8] = [], bodyFile: SpooledFile? = nil) {
    self.head = head
    self.body = body
    self.bodyFile = bodyFile
  }

  /// The body's length, wherever it is.
  public var bodyCount: Int { bodyFile?.size ?? body.count }

  /// The whole body in memory (reads a spooled file).
  public func bodyBytes() -> [UInt8] {
    if let bodyFile { return bodyFile.readAll() ?? [] }
    return body
  }

  public var method: String { head.method }
  public var headers: HTTPHeaders { head.headers }
}
