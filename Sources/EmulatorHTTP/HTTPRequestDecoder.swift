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

/// What the decoder has to say after being fed bytes.
public enum HTTPDecoderEvent: Sendable {
  /// Nothing complete yet.
  case needMoreData
  /// A head with `Expect: 100-continue` arrived and its body has not: the peer waits for an interim
  /// `100 Continue` (RFC 9110 §10.1.1). Reported once per request.
  case continueExpected(HTTPRequestHead)
  /// A piece of a body larger than `spoolThreshold`, to be written out; the rest follows, and
  /// the final `request` carries only the last piece in `body`.
  case bodyPart([UInt8])
  /// A complete request.
  case request(HTTPRequest)
}

/// An incremental, I/O-free HTTP/1.1 request decoder (RFC 9112). Feed it bytes as they arrive and
/// call `next` until it needs more data. Requests are produced one at a time, in order, so
/// pipelined requests stay in the buffer until the caller asks for them.
///
/// Strictness follows RFC 9112 and swift-nio's decoder: lines end in CRLF; no obs-fold; header
/// names are tokens with no whitespace before the colon; `Content-Length` with `Transfer-Encoding`
/// and differing `Content-Length`s are rejected (request smuggling); the only transfer coding is a
/// sole `chunked`.
public struct HTTPRequestDecoder: Sendable {
  public var limits: HTTPLimits
  /// Bodies that grow past this are handed out in `bodyPart`s instead of held whole.
  public var spoolThreshold = Int.max

  private var buffer: [UInt8] = []
  private var start = 0
  private var headScanFrom = 0
  private var state: State = .head
  /// A head whose body framing was refused (errors end the connection, so it is never stale).
  private var refusedHead: HTTPRequestHead?
  private var body: [UInt8] = []
  private var bodyLimit = 0
  private var bodyReceived = 0
  private var trailerBytes = 0

  private enum State: Sendable {
    case head
    case fixed(HTTPRequestHead, remaining: Int)
    case chunkSize(HTTPRequestHead)
    case chunkData(HTTPRequestHead, remaining: Int)
    case chunkDataEnd(HTTPRequestHead)
    case trailers(HTTPRequestHead)
  }

  public init(limits: HTTPLimits = HTTPLimits()) {
    self.limits = limits
  }

  /// Bytes received and not yet consumed by a returned request.
  public var bufferedByteCount: Int { buffer.count - start }

  /// Whether the decoder sits between requests with nothing buffered.
  public var isIdle: Bool {
    if case .head = state { return buffer.count == start }
    return false
  }

  /// Whether a request head has been read and its body is still arriving.
  public var isReadingBody: Bool {
    if case .head = state { return false }
    return true
  }

  /// The head of the request being read when an error was thrown: the one whose body was
  /// arriving or whose framing was refused; nil when the error was in a head.
  public var currentHead: HTTPRequestHead? {
    switch state {
    case .head: refusedHead
    case .fixed(let head, _), .chunkSize(let head), .chunkData(let head, _), .chunkDataEnd(let head),
      .trailers(let head):
      head
    }
  }

  public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
    compactIfWorthIt()
    buffer.append(contentsOf: bytes)
  }

  public mutating func feed(_ bytes: some Sequence<UInt8>) {
    compactIfWorthIt()
    buffer.append(contentsOf: bytes)
  }

  private mutating func compactIfWorthIt() {
    if start > 0 && (start == buffer.count || start >= 65536 && start * 2 >= buffer.count) {
      buffer.removeSubrange(0..<start)
      headScanFrom -= start
      start = 0
    }
  }

  /// Decodes as far as the buffered bytes allow.
  /// - Parameter limitFor: the largest body the handler accepts for this head; the decoder also
  ///   applies `limits.maxBodyBytes`. It is called once per head, before any of its body is read,
  ///   and may refuse the request by throwing (the error is passed on).
  public mutating func next(
    bodyLimit limitFor: (HTTPRequestHead) throws(HTTPParseError) -> Int = { _ in Int.max }
  ) throws(HTTPParseError) -> HTTPDecoderEvent {
    while true {
      switch state {
      case .head:
        guard let head = try parseHead() else { return .needMoreData }
        let limit = try limitFor(head)
        do {
          if let event = try beginBody(head, handlerLimit: limit) { return event }
        } catch {
          refusedHead = head
          throw error
        }
      case .fixed(let head, let remaining):
        let take = min(remaining, buffer.count - start)
        body.append(contentsOf: buffer[start..<(start + take)])
        start += take
        if take == remaining { return .request(finish(head)) }
        state = .fixed(head, remaining: remaining - take)
        if let part = takePartIfLarge() { return .bodyPart(part) }
        return .needMoreData
      case .chunkSize(let head):
        guard let line = try takeLine(limit: 4096, what: "chunk size line") else { return .needMoreData }
        let size = try parseChunkSize(line)
        if size == 0 {
          state = .trailers(head)
        } else {
          if size > bodyLimit - bodyReceived - body.count {
            throw HTTPParseError(413, "The request body is larger than \(bodyLimit) bytes.")
          }
          state = .chunkData(head, remaining: size)
        }
      case .chunkData(let head, let remaining):
        let take = min(remaining, buffer.count - start)
        body.append(contentsOf: buffer[start..<(start + take)])
        start += take
        if take < remaining {
          state = .chunkData(head, remaining: remaining - take)
          if let part = takePartIfLarge() { return .bodyPart(part) }
          return .needMoreData
        }
        state = .chunkDataEnd(head)
        if let part = takePartIfLarge() { return .bodyPart(part) }
      case .chunkDataEnd(let head):
        guard buffer.count - start >= 2 else { return .needMoreData }
        guard buffer[start] == 13, buffer[start + 1] == 10 else {
          throw HTTPParseError(400, "A chunk's data must be followed by CRLF.")
        }
        start += 2
        state = .chunkSize(head)
      case .trailers(let head):
        guard let line = try takeLine(limit: limits.maxHeaderBytes, what: "trailer") else {
          return .needMoreData
        }
        if line.isEmpty { return .request(finish(head)) }
        trailerBytes += line.count + 2
        if trailerBytes > limits.maxHeaderBytes {
          throw HTTPParseError(431, "The trailer section is larger than \(limits.maxHeaderBytes) bytes.")
        }
        // Trailers are validated like header fields and then dropped (RFC 9112 §7.1.2 allows it).
        _ = try parseField(line)
      }
    }
  }

  private mutating func takePartIfLarge() -> [UInt8]? {
    guard body.count >= spoolThreshold else { return nil }
    let part = body
    bodyReceived += part.count
    body = []
    return part
  }

  private mutating func finish(_ head: HTTPRequestHead) -> HTTPRequest {
    let request = HTTPRequest(head: head, body: body)
    body = []
    bodyReceived = 0
    trailerBytes = 0
    state = .head
    headScanFrom = start
    return request
  }

  // MARK: Head

  /// Returns the head once its terminating empty line is buffered.
  private mutating func parseHead() throws(HTTPParseError) -> HTTPRequestHead? {
    // RFC 9112 §2.2: ignore empty lines before the request line.
    while buffer.count - start >= 2, buffer[start] == 13, buffer[start + 1] == 10 {
      start += 2
    }
    if buffer.count - start == 1 && buffer[start] == 13 { return nil }
    headScanFrom = max(headScanFrom, start)
    guard let end = findHeadEnd() else {
      // Refuse as soon as the limit is certainly exceeded, and exactly when the whole head would
      // be refused: however the bytes are split into reads, the answer is the same.
      let pending = buffer.count - start
      if pending >= limits.maxRequestLineBytes + 2
        && firstCRLF(from: start, limit: limits.maxRequestLineBytes + 1) == nil
      {
        throw HTTPParseError(414, "The request line is longer than \(limits.maxRequestLineBytes) bytes.")
      }
      if pending >= limits.maxHeaderBytes + 4 {
        throw HTTPParseError(431, "The header block is larger than \(limits.maxHeaderBytes) bytes.")
      }
      return nil
    }
    if end - start > limits.maxHeaderBytes {
      // The request line is judged first, as it is while the head is still arriving.
      if firstCRLF(from: start, limit: limits.maxRequestLineBytes + 1) == nil {
        throw HTTPParseError(414, "The request line is longer than \(limits.maxRequestLineBytes) bytes.")
      }
      throw HTTPParseError(431, "The header block is larger than \(limits.maxHeaderBytes) bytes.")
    }
    let headStart = start
    start = end + 4
    return try buffer.withUnsafeBufferPointer { all throws(HTTPParseError) in
      try Self.decodeHead(UnsafeBufferPointer(rebasing: all[headStart..<end]), limits: limits)
    }
  }

  private mutating func findHeadEnd() -> Int? {
    let count = buffer.count
    var index = max(headScanFrom, start)
    let found: Int? = buffer.withUnsafeBufferPointer { bytes in
      while index + 3 < count {
        if bytes[index + 3] != 10 {
          index += bytes[index + 3] == 13 ? 1 : 4
          continue
        }
        if bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 { return index }
        index += 1
      }
      return nil
    }
    headScanFrom = found ?? max(start, count - 3)
    return found
  }

  private func firstCRLF(from: Int, limit: Int) -> Int? {
    let end = min(buffer.count - 1, from + limit)
    var index = from
    while index < end {
      if buffer[index] == 13 && buffer[index + 1] == 10 { return index }
      index += 1
    }
    return nil
  }

  static func decodeHead(
    _ bytes: UnsafeBufferPointer<UInt8>, limits: HTTPLimits
  ) throws(HTTPParseError) -> HTTPRequestHead {
    var lines: [UnsafeBufferPointer<UInt8>] = []
    var lineStart = 0
    var index = 0
    while index < bytes.count {
      if bytes[index] == 13 && index + 1 < bytes.count && bytes[index + 1] == 10 {
        lines.append(UnsafeBufferPointer(rebasing: bytes[lineStart..<index]))
        index += 2
        lineStart = index
      } else {
        index += 1
      }
    }
    lines.append(UnsafeBufferPointer(rebasing: bytes[lineStart..<bytes.count]))
    let requestLine = lines[0]
    if requestLine.count > limits.maxRequestLineBytes {
      throw HTTPParseError(414, "The request line is longer than \(limits.maxRequestLineBytes) bytes.")
    }
    if lines.count - 1 > limits.maxHeaderCount {
      throw HTTPParseError(431, "More than \(limits.maxHeaderCount) header fields.")
    }
    var head = try decodeRequestLine(requestLine)
    for line in lines.dropFirst() {
      let (name, value) = try parseField(line)
      head.headers.add(name, value)
    }
    if head.version == .http11 && head.headers.values("host").count != 1 {
      throw HTTPParseError(400, "An HTTP/1.1 request must carry exactly one Host header.")
    }
    return head
  }

  static func decodeRequestLine(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> HTTPRequestHead {
    let parts = line.split(separator: 32, maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
      throw HTTPParseError(400, "The request line must be: METHOD SP target SP HTTP-version.")
    }
    guard parts[0].allSatisfy(isTokenByte) else {
      throw HTTPParseError(400, "The method is not a valid token.")
    }
    guard parts[1].allSatisfy({ $0 > 32 && $0 < 127 }) else {
      throw HTTPParseError(400, "The request target contains a byte that must be percent-encoded.")
    }
    let version = try decodeVersion(parts[2])
    let method = String(decoding: parts[0], as: UTF8.self)
    var target = String(decoding: parts[1], as: UTF8.self)
    if target.utf8.first == UInt8(ascii: "/") {
      // origin-form
    } else if target == "*" && method == "OPTIONS" {
      // asterisk-form
    } else if let rest = Self.afterScheme(target) {
      // absolute-form (RFC 9112 §3.2.2): keep path and query.
      if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) {
        target = rest[slash] == "/" ? String(rest[slash...]) : "/" + rest[slash...]
      } else {
        target = "/"
      }
    } else {
      throw HTTPParseError(400, "The request target must start with '/'.")
    }
    return HTTPRequestHead(method: method, target: target, version: version)
  }

  /// The part of an absolute-form target after `http://` or `https://`.
  static func afterScheme(_ target: String) -> Substring? {
    let lower = target.lowercased()
    for scheme in ["http://", "https://"] where lower.hasPrefix(scheme) {
      return target.dropFirst(scheme.count)
    }
    return nil
  }

  static func decodeVersion(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) throws(HTTPParseError) -> HTTPVersion {
    let text = Array(bytes)
    guard text.count == 8, text.starts(with: Array("HTTP/".utf8)), text[6] == UInt8(ascii: "."),
      isDigit(text[5]), isDigit(text[7])
    else {
      throw HTTPParseError(400, "The HTTP version is malformed.")
    }
    switch (text[5], text[7]) {
    case (UInt8(ascii: "1"), UInt8(ascii: "0")): return .http10
    case (UInt8(ascii: "1"), _): return .http11
    default:
      throw HTTPParseError(505, "Only HTTP/1.0 and HTTP/1.1 are supported.")
    }
  }

  static func parseField(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> (String, String) {
    guard let first = line.first else { throw HTTPParseError(400, "Empty header line.") }
    if first == 32 || first == 9 {
      throw HTTPParseError(400, "Obsolete line folding (obs-fold) is not accepted.")
    }
    guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
      throw HTTPParseError(400, "A header line has no colon.")
    }
    let name = line[..<colon]
    guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
      throw HTTPParseError(400, "A header name is not a valid token (or has whitespace before the colon).")
    }
    var valueStart = colon + 1
    var valueEnd = line.count
    while valueStart < valueEnd, line[valueStart] == 32 || line[valueStart] == 9 { valueStart += 1 }
    while valueEnd > valueStart, line[valueEnd - 1] == 32 || line[valueEnd - 1] == 9 { valueEnd -= 1 }
    let value = line[valueStart..<valueEnd]
    guard value.allSatisfy({ $0 == 9 || $0 >= 32 && $0 != 127 }) else {
      throw HTTPParseError(400, "A header value contains a control character (NUL, CR or LF).")
    }
    // Lower-cased while copied (a token is ASCII): no second pass through `String.lowercased()`.
    let lowerName = String(unsafeUninitializedCapacity: name.count) { buffer in
      for (offset, byte) in name.enumerated() {
        buffer[offset] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
      }
      return name.count
    }
    return (lowerName, String(decoding: value, as: UTF8.self))
  }

  private func parseField(_ line: [UInt8]) throws(HTTPParseError) -> (String, String) {
    try line.withUnsafeBufferPointer { pointer throws(HTTPParseError) in try Self.parseField(pointer) }
  }

  // MARK: Body framing

  private mutating func beginBody(
    _ head: HTTPRequestHead, handlerLimit: Int
  ) throws(HTTPParseError) -> HTTPDecoderEvent? {
    bodyLimit = min(limits.maxBodyBytes, handlerLimit)
    let transferEncodings = head.headers.values("transfer-encoding")
    let contentLengths = head.headers.values("content-length")
    var chunked = false
    var length = 0
    if !transferEncodings.isEmpty {
      if !contentLengths.isEmpty {
        throw HTTPParseError(400, "Content-Length and Transfer-Encoding must not be sent together.")
      }
      let codings = transferEncodings.flatMap { $0.split(separator: ",") }
        .map { $0.trimmingASCIIWhitespace().lowercased() }
      guard codings == ["chunked"] else {
        throw HTTPParseError(501, "The only supported Transfer-Encoding is chunked.")
      }
      chunked = true
    } else if !contentLengths.isEmpty {
      var value: Int?
      for field in contentLengths {
        for part in field.split(separator: ",", omittingEmptySubsequences: false) {
          let parsed: Int
          switch DecimalInteger.parse(part.trimmingASCIIWhitespace()) {
          case .success(let value): parsed = Int(value)
          case .failure(.outOfRange):
            throw HTTPParseError(400, "Content-Length is out of range (more digits than any byte count).")
          case .failure(.malformed): throw HTTPParseError(400, "Content-Length is not a valid number.")
          }
          if let earlier = value, earlier != parsed {
            throw HTTPParseError(400, "Differing Content-Length values.")
          }
          value = parsed
        }
      }
      length = value ?? 0
      if length > bodyLimit {
        throw HTTPParseError(413, "The request body is larger than \(bodyLimit) bytes.")
      }
    }
    body = []
    if chunked {
      state = .chunkSize(head)
    } else if length > 0 {
      state = .fixed(head, remaining: length)
    } else {
      return .request(finish(head))
    }
    if let expect = head.headers["expect"] {
      guard expect.lowercased() == "100-continue" else {
        throw HTTPParseError(417, "Only 'Expect: 100-continue' is supported.")
      }
      if head.version == .http11 && buffer.count == start { return .continueExpected(head) }
    }
    return nil
  }

  /// Takes one CRLF-terminated line (without the CRLF), or nil when it has not fully arrived.
  private mutating func takeLine(limit: Int, what: String) throws(HTTPParseError) -> [UInt8]? {
    guard let end = firstCRLF(from: start, limit: limit + 2) else {
      if buffer.count - start > limit + 1 {
        throw HTTPParseError(400, "The \(what) is longer than \(limit) bytes.")
      }
      if buffer[start..<buffer.count].contains(10) {
        throw HTTPParseError(400, "The \(what) ends in a bare LF; CRLF is required.")
      }
      return nil
    }
    if end - start > limit { throw HTTPParseError(400, "The \(what) is longer than \(limit) bytes.") }
    if buffer[start..<end].contains(10) {
      throw HTTPParseError(400, "The \(what) ends in a bare LF; CRLF is required.")
    }
    let line = Array(buffer[start..<end])
    start = end + 2
    return line
  }

  /// `chunk-size [ chunk-ext ]` (RFC 9112 §7.1): hex digits, then optional `;` extensions.
  private func parseChunkSize(_ line: [UInt8]) throws(HTTPParseError) -> Int {
    var size = 0
    var index = 0
    while index < line.count, let digit = Self.hexValue(line[index]) {
      if size > (Int.max >> 4) { throw HTTPParseError(400, "The chunk size overflows.") }
      size = size << 4 | digit
      index += 1
    }
    guard index > 0 else { throw HTTPParseError(400, "A chunk size must start with a hex digit.") }
    guard index <= 15 else { throw HTTPParseError(400, "The chunk size overflows.") }
    var rest = line[index...]
    while let byte = rest.first, byte == 32 || byte == 9 { rest = rest.dropFirst() }
    if let byte = rest.first {
      guard byte == UInt8(ascii: ";") else {
        throw HTTPParseError(400, "Unexpected characters after a chunk size.")
      }
      guard rest.allSatisfy({ $0 == 9 || $0 >= 32 && $0 != 127 }) else {
        throw HTTPParseError(400, "A chunk extension contains a control character.")
      }
    }
    return size
  }

  // MARK: Byte classes

  static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

  static func hexValue(_ byte: UInt8) -> Int? {
    switch byte {
    case 48...57: Int(byte - 48)
    case 65...70: Int(byte - 55)
    case 97...102: Int(byte - 87)
    default: nil
    }
  }

  /// `tchar` of RFC 9110 §5.6.2.
  static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case 48...57, 65...90, 97...122: true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
      UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
      UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
      true
    default: false
    }
  }
}
