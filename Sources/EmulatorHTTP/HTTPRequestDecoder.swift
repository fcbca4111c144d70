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
      try HTTPHeadParser.decodeHead(UnsafeBufferPointer(rebasing: all[headStart..<end]), limits: limits)
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

  private func parseField(_ line: [UInt8]) throws(HTTPParseError) -> (String, String) {
    try line.withUnsafeBufferPointer { pointer throws(HTTPParseError) in try HTTPHeadParser.parseField(pointer) }
  }

  // MARK: Body framing

  private mutating func beginBody(
    _ head: HTTPRequestHead, handlerLimit: Int
  ) throws(HTTPParseError) -> HTTPDecoderEvent? {
    bodyLimit = min(limits.maxBodyBytes, handlerLimit)
    // One pass over the fields, no arrays unless a field is there (this runs for every request).
    var transferEncodings: [String] = []
    var contentLengths: [String] = []
    var expect: String?
    // Names compared by bytes (`switch` would use `==`'s Unicode comparison on every miss).
    for field in head.headers.fields {
      if field.name.sameUTF8("content-length") {
        contentLengths.append(field.value)
      } else if field.name.sameUTF8("transfer-encoding") {
        transferEncodings.append(field.value)
      } else if expect == nil && field.name.sameUTF8("expect") {
        expect = field.value
      }
    }
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
      func take(_ part: Substring) throws(HTTPParseError) {
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
      for field in contentLengths {
        // A list (`10, 10`) is split; a single value (every client's) is parsed as it is.
        guard field.utf8.contains(UInt8(ascii: ",")) else {
          try take(field[...])
          continue
        }
        for part in field.split(separator: ",", omittingEmptySubsequences: false) { try take(part) }
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
    if let expect {
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
    while index < line.count, let digit = HTTPSyntax.hexValue(line[index]) {
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
}
