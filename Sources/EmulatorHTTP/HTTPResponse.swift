/// A response produced by a handler. `Content-Length` and `Connection` are added by the server.
public struct HTTPResponse: Sendable {
  public var status: Int
  public var headers: HTTPHeaders
  public var body: [UInt8]
  /// When set, the body is this file region (sent with `sendfile`) and `body` is ignored.
  public var bodyFile: FileRegion?
  /// When set, the body is streamed with chunked transfer coding and `body` is ignored.
  public var bodyStream: (any HTTPBodyStream)?

  public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// Serialises the response for the wire in one buffer.
  /// - Parameters:
  ///   - includeBody: false for `HEAD`, which keeps the `Content-Length` of the body it omits.
  ///   - close: adds `Connection: close`.
  public func encoded(includeBody: Bool = true, close: Bool = false) -> [UInt8] {
    var out: [UInt8] = []
    encode(into: &out, includeBody: includeBody, close: close)
    return out
  }

  /// Appends the encoded response to `out` (a buffer the caller may reuse): the head is written
  /// through a pointer into a scratch buffer sized in a first pass over the fields, then appended
  /// in one copy (an `Array.append` per piece cost ~130 instructions each, a dozen per response).
  public func encode(into out: inout [UInt8], includeBody: Bool = true, close: Bool = false) {
    let bodyless = status < 200 || status == 204 || status == 304
    let inlineBody = includeBody && !bodyless && bodyFile == nil && bodyStream == nil
    var size = Self.headTailRoom
    for field in headers.fields { size += field.name.utf8.count + field.value.utf8.count + 4 }
    out.reserveCapacity(out.count + 32 + size + (inlineBody ? body.count : 0))
    Self.appendStatusLine(status, to: &out)
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { scratch in
      var head = HeadBytes(base: scratch.baseAddress!)
      var hasLength = false
      for field in headers.fields {
        if field.name.sameUTF8("content-length") { hasLength = true }
        if field.name.sameUTF8("connection") { continue }
        head.field(field.name, field.value)
      }
      if bodyStream != nil && !bodyless {
        head.literal("transfer-encoding: chunked\r\n")
      } else if !hasLength && !bodyless {
        head.literal("content-length: ")
        head.decimal(bodyFile?.length ?? body.count)
        head.literal("\r\n")
      }
      if close { head.literal("connection: close\r\n") }
      head.literal("\r\n")
      out.append(contentsOf: UnsafeBufferPointer(start: scratch.baseAddress, count: head.count))
    }
    if inlineBody { out.append(contentsOf: body) }
  }

  /// Room for what `encode` writes after the fields: `content-length` (or `transfer-encoding`),
  /// `connection: close` and the blank line.
  private static let headTailRoom = 64

  /// A head being written through a pointer (into room `encode` sized beforehand).
  private struct HeadBytes {
    let base: UnsafeMutablePointer<UInt8>
    var count = 0

    mutating func bytes(_ source: UnsafeBufferPointer<UInt8>) {
      guard let start = source.baseAddress else { return }
      (base + count).update(from: start, count: source.count)
      count += source.count
    }

    mutating func literal(_ text: StaticString) {
      text.withUTF8Buffer { bytes($0) }
    }

    /// `name: value` CRLF. Values come from stored metadata: a control character (CR, LF…)
    /// becomes a space, so it can never split the response.
    mutating func field(_ name: String, _ value: String) {
      var (name, value) = (name, value)
      name.withUTF8 { bytes($0) }
      base[count] = UInt8(ascii: ":")
      base[count + 1] = 32
      count += 2
      let valueStart = count
      value.withUTF8 { bytes($0) }
      for index in valueStart..<count where base[index] < 32 && base[index] != 9 || base[index] == 127 {
        base[index] = 32
      }
      base[count] = 13
      base[count + 1] = 10
      count += 2
    }

    /// A non-negative integer's decimal digits (a length: at most 20).
    mutating func decimal(_ value: Int) {
      HTTPResponse.decimalDigits(value) { digit in
        base[count] = digit
        count += 1
      }
    }
  }

  /// `HTTP/1.1 <status> <reason>` CRLF.
  static func appendStatusLine(_ status: Int, to out: inout [UInt8]) {
    if status == 200 {
      out.append(contentsOf: Self.okStatusLine)
      return
    }
    out.append(contentsOf: "HTTP/1.1 ".utf8)
    Self.appendDecimal(status, to: &out)
    out.append(32)
    out.append(contentsOf: HTTPStatus.reason(status).utf8)
    out.append(contentsOf: "\r\n".utf8)
  }

  private static let okStatusLine = Array("HTTP/1.1 200 OK\r\n".utf8)

  /// A non-negative integer's decimal digits (a status, a length).
  static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
    decimalDigits(value) { out.append($0) }
  }

  /// Hands a non-negative integer's decimal digits to `emit`, most significant first.
  static func decimalDigits(_ value: Int, _ emit: (UInt8) -> Void) {
    let value = UInt(max(value, 0))
    var divisor: UInt = 1
    while divisor <= value / 10 { divisor *= 10 }
    repeat {
      emit(UInt8(ascii: "0") + UInt8(value / divisor % 10))
      divisor /= 10
    } while divisor > 0
  }

}

/// An HTTP status code with a name: `HTTPResponse(.noContent)` instead of a bare 204. A plain
/// integer underneath (no allocation, no lookup); `HTTPResponse.status` stays an `Int`.
public struct HTTPStatus: RawRepresentable, Hashable, Sendable, ExpressibleByIntegerLiteral {
  public let rawValue: Int
  public init(rawValue: Int) { self.rawValue = rawValue }
  public init(integerLiteral value: Int) { self.rawValue = value }

  public static let `continue`: HTTPStatus = 100
  public static let ok: HTTPStatus = 200
  public static let created: HTTPStatus = 201
  public static let noContent: HTTPStatus = 204
  public static let partialContent: HTTPStatus = 206
  public static let found: HTTPStatus = 302
  public static let seeOther: HTTPStatus = 303
  public static let notModified: HTTPStatus = 304
  public static let permanentRedirect: HTTPStatus = 308
  public static let badRequest: HTTPStatus = 400
  public static let unauthorized: HTTPStatus = 401
  public static let forbidden: HTTPStatus = 403
  public static let notFound: HTTPStatus = 404
  public static let methodNotAllowed: HTTPStatus = 405
  public static let requestTimeout: HTTPStatus = 408
  public static let conflict: HTTPStatus = 409
  public static let lengthRequired: HTTPStatus = 411
  public static let preconditionFailed: HTTPStatus = 412
  public static let contentTooLarge: HTTPStatus = 413
  public static let uriTooLong: HTTPStatus = 414
  public static let unsupportedMediaType: HTTPStatus = 415
  public static let rangeNotSatisfiable: HTTPStatus = 416
  public static let expectationFailed: HTTPStatus = 417
  public static let tooManyRequests: HTTPStatus = 429
  public static let requestHeaderFieldsTooLarge: HTTPStatus = 431
  public static let internalServerError: HTTPStatus = 500
  public static let notImplemented: HTTPStatus = 501
  public static let serviceUnavailable: HTTPStatus = 503
  public static let httpVersionNotSupported: HTTPStatus = 505
  public static let insufficientStorage: HTTPStatus = 507

  /// The reason phrase of the status line.
  public var reason: String { Self.reason(rawValue) }

  /// Reason phrases for the status codes this server sends.
  public static func reason(_ status: Int) -> String {
    switch status {
    case 100: "Continue"
    case 200: "OK"
    case 201: "Created"
    case 204: "No Content"
    case 206: "Partial Content"
    case 302: "Found"
    case 303: "See Other"
    case 304: "Not Modified"
    case 308: "Permanent Redirect"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 408: "Request Timeout"
    case 409: "Conflict"
    case 411: "Length Required"
    case 412: "Precondition Failed"
    case 413: "Content Too Large"
    case 414: "URI Too Long"
    case 415: "Unsupported Media Type"
    case 416: "Range Not Satisfiable"
    case 417: "Expectation Failed"
    case 429: "Too Many Requests"
    case 431: "Request Header Fields Too Large"
    case 500: "Internal Server Error"
    case 501: "Not Implemented"
    case 503: "Service Unavailable"
    case 505: "HTTP Version Not Supported"
    case 507: "Insufficient Storage"
    default: "Status \(status)"
    }
  }
}

extension HTTPResponse {
  /// A response with a named status.
  public init(_ status: HTTPStatus, headers: HTTPHeaders = [:], body: [UInt8] = []) {
    self.init(status: status.rawValue, headers: headers, body: body)
  }
}
