import Testing

@testable import EmulatorHTTP

/// Decodes everything in `text`, fed whole or one byte at a time; returns the requests, or the
/// first error.
private func decode(
  _ text: String, byteAtATime: Bool = false, limits: HTTPLimits = HTTPLimits(), bodyLimit: Int = .max,
  spoolThreshold: Int = .max, parts: UnsafeMutablePointer<Int>? = nil
) -> Result<[HTTPRequest], HTTPParseError> {
  var decoder = HTTPRequestDecoder(limits: limits)
  decoder.spoolThreshold = spoolThreshold
  var requests: [HTTPRequest] = []
  var spooled: [UInt8] = []
  let bytes = Array(text.utf8)
  let chunks: [[UInt8]] = byteAtATime ? bytes.map { [$0] } : [bytes]
  do {
    for chunk in chunks {
      decoder.feed(chunk)
      loop: while true {
        switch try decoder.next(bodyLimit: { _ in bodyLimit }) {
        case .needMoreData: break loop
        case .continueExpected: continue
        case .bodyPart(let part):
          spooled += part
          parts?.pointee += 1
        case .request(var request):
          request.body = spooled + request.body
          spooled = []
          requests.append(request)
        }
      }
    }
  } catch {
    return .failure(error)
  }
  return .success(requests)
}

private func status(_ text: String, limits: HTTPLimits = HTTPLimits(), bodyLimit: Int = .max) -> Int? {
  if case .failure(let error) = decode(text, limits: limits, bodyLimit: bodyLimit) { return error.status }
  return nil
}

@Suite struct HTTPRequestDecoderTests {
  @Test(arguments: [false, true])
  func decodesAGetWholeOrByteByByte(byteAtATime: Bool) throws {
    let text = "GET /b/x/o/a%2Fb?alt=media&x=1 HTTP/1.1\r\nHost: localhost:9199\r\nX-Thing:  spaced value \t\r\n\r\n"
    let requests = try decode(text, byteAtATime: byteAtATime).get()
    #expect(requests.count == 1)
    let head = requests[0].head
    #expect(head.method == "GET")
    #expect(head.target == "/b/x/o/a%2Fb?alt=media&x=1")
    #expect(head.rawPath == "/b/x/o/a%2Fb")
    #expect(head.rawQuery == "alt=media&x=1")
    #expect(head.version == .http11)
    #expect(head.headers["HOST"] == "localhost:9199")
    #expect(head.headers["x-thing"] == "spaced value")
    #expect(head.keepAlive)
  }

  @Test(arguments: [false, true])
  func decodesAContentLengthBody(byteAtATime: Bool) throws {
    let text = "PATCH /o HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world"
    let requests = try decode(text, byteAtATime: byteAtATime).get()
    #expect(requests.map { String(decoding: $0.body, as: UTF8.self) } == ["hello world"])
  }

  @Test(arguments: [false, true])
  func decodesChunkedBodiesWithExtensionsAndTrailers(byteAtATime: Bool) throws {
    let text =
      "POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
      + "5;name=value\r\nhello\r\n6 ; ext\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n"
    let requests = try decode(text, byteAtATime: byteAtATime).get()
    #expect(requests.map { String(decoding: $0.body, as: UTF8.self) } == ["hello world"])
  }

  @Test(arguments: [false, true])
  func handsOutLargeBodiesInParts(byteAtATime: Bool) throws {
    var parts = 0
    let body = String(repeating: "0123456789", count: 100)
    let fixed = "POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n" + body
    let requests = try decode(fixed, byteAtATime: byteAtATime, spoolThreshold: 64, parts: &parts).get()
    #expect(requests.map { String(decoding: $0.body, as: UTF8.self) } == [body])
    // Fed whole, the body completes in one call and needs no parts.
    #expect(byteAtATime ? parts >= 10 : parts == 0)
    parts = 0
    let chunked = "POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n" + body + "\r\n0\r\n\r\n"
    let again = try decode(chunked, byteAtATime: byteAtATime, spoolThreshold: 64, parts: &parts).get()
    #expect(again.map { String(decoding: $0.body, as: UTF8.self) } == [body])
    #expect(byteAtATime ? parts >= 10 : parts == 1)
  }

  @Test func answersPipelinedRequestsInOrder() throws {
    var text = ""
    for index in 0..<100 { text += "GET /\(index) HTTP/1.1\r\nHost: h\r\n\r\n" }
    let requests = try decode(text).get()
    #expect(requests.map(\.head.target) == (0..<100).map { "/\($0)" })
  }

  @Test func reportsExpectContinueBeforeTheBody() throws {
    var decoder = HTTPRequestDecoder()
    decoder.feed(Array("PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8))
    guard case .continueExpected = try decoder.next() else {
      Issue.record("expected continueExpected")
      return
    }
    guard case .needMoreData = try decoder.next() else {
      Issue.record("expected needMoreData")
      return
    }
    decoder.feed(Array("abc".utf8))
    guard case .request(let request) = try decoder.next() else {
      Issue.record("expected the request")
      return
    }
    #expect(request.body == Array("abc".utf8))
  }

  @Test func acceptsHTTP10WithoutHostAndClosesByDefault() throws {
    let requests = try decode("GET / HTTP/1.0\r\n\r\n").get()
    #expect(requests.first?.head.version == .http10)
    #expect(requests.first?.head.keepAlive == false)
    let kept = try decode("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").get()
    #expect(kept.first?.head.keepAlive == true)
    let closing = try decode("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").get()
    #expect(closing.first?.head.keepAlive == false)
  }

  @Test func reducesAbsoluteFormToThePath() throws {
    let requests = try decode("GET http://localhost:9199/v0/b/x/o?y=1 HTTP/1.1\r\nHost: localhost\r\n\r\n").get()
    #expect(requests.first?.head.target == "/v0/b/x/o?y=1")
  }

  @Test func ignoresEmptyLinesBeforeTheRequestLine() throws {
    let requests = try decode("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n").get()
    #expect(requests.count == 1)
  }

  // MARK: Attacks and malformed input

  @Test func testRefusesRequestSmugglingWithContentLengthAndTransferEncoding() {
    #expect(
      status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") == 400)
  }

  @Test func testRefusesDifferingDuplicateContentLengths() {
    #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde") == 400)
    #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4, 5\r\n\r\nabcde") == 400)
    // Identical duplicates are harmless (RFC 9112 §6.3).
    #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc") == nil)
  }

  @Test func testRefusesInvalidContentLengths() {
    #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n") == 400)
    #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\nabcde") == 400)
    #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n") == 400)
  }

  @Test func testRefusesTransferCodingsOtherThanAFinalChunked() {
    #expect(status("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n") == 501)
    #expect(status("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, identity\r\n\r\n") == 501)
  }

  @Test func testRefusesMalformedChunks() {
    let head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
    #expect(status(head + "zz\r\nhello\r\n0\r\n\r\n") == 400)
    #expect(status(head + "fffffffffffffffffff\r\n") == 400)
    #expect(status(head + "5\r\nhelloXX0\r\n\r\n") == 400)
    #expect(status(head + "5\nhello\r\n0\r\n\r\n") == 400)
    #expect(status(head + "5 x\r\nhello\r\n0\r\n\r\n") == 400)
  }

  @Test func testRefusesObsFoldAndBadHeaderNames() {
    #expect(status("GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n  folded\r\n\r\n") == 400)
    #expect(status("GET / HTTP/1.1\r\nHost: h\r\nX-A : 1\r\n\r\n") == 400)
    #expect(status("GET / HTTP/1.1\r\nHost: h\r\nX(A): 1\r\n\r\n") == 400)
    #expect(status("GET / HTTP/1.1\r\nHost: h\r\nno-colon\r\n\r\n") == 400)
  }

  @Test func testRefusesControlCharactersInHeaderValues() {
    #expect(status("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\u{0}b\r\n\r\n") == 400)
    #expect(status("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\rb\r\n\r\n") == 400)
    #expect(status("GET / HTTP/1.1\r\nHost: h\nX-A: b\r\n\r\n") == 400)
  }

  @Test func testRefusesMalformedRequestLines() {
    #expect(status("GET  / HTTP/1.1\r\nHost: h\r\n\r\n") == 400)
    #expect(status("GET /\u{1} HTTP/1.1\r\nHost: h\r\n\r\n") == 400)
    #expect(status("G@T / HTTP/1.1\r\nHost: h\r\n\r\n") == 400)
    #expect(status("GET relative HTTP/1.1\r\nHost: h\r\n\r\n") == 400)
    #expect(status("GET / HTTP/1.1 extra\r\nHost: h\r\n\r\n") == 400)
    #expect(status("GET / HTTX/1.1\r\nHost: h\r\n\r\n") == 400)
  }

  @Test func testRefusesHTTP2PrefaceAndOtherVersions() {
    #expect(status("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") == 505)
    #expect(status("GET / HTTP/3.0\r\nHost: h\r\n\r\n") == 505)
  }

  @Test func testRefusesHTTP11WithoutExactlyOneHost() {
    #expect(status("GET / HTTP/1.1\r\n\r\n") == 400)
    #expect(status("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") == 400)
  }

  @Test func testRefusesOversizedRequestLine() {
    var limits = HTTPLimits()
    limits.maxRequestLineBytes = 100
    #expect(
      status("GET /" + String(repeating: "a", count: 200) + " HTTP/1.1\r\nHost: h\r\n\r\n", limits: limits) == 414)
    // Even before the line ends.
    #expect(status("GET /" + String(repeating: "a", count: 200), limits: limits) == 414)
  }

  @Test func testRefusesOversizedHeaderBlocks() {
    var limits = HTTPLimits()
    limits.maxHeaderBytes = 1024
    let big = "GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + String(repeating: "b", count: 2000) + "\r\n\r\n"
    #expect(status(big, limits: limits) == 431)
    #expect(status(String(big.dropLast(4)), limits: limits) == 431)
    limits = HTTPLimits()
    limits.maxHeaderCount = 3
    #expect(status("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits: limits) == 431)
  }

  @Test func testRefusesBodiesOverTheHandlersLimitBeforeReadingThem() {
    #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n", bodyLimit: 10) == 413)
    let chunked =
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n"
    #expect(status(chunked, bodyLimit: 10) == 413)
  }

  @Test func testRefusesUnknownExpectations() {
    #expect(status("PUT / HTTP/1.1\r\nHost: h\r\nExpect: magic\r\nContent-Length: 1\r\n\r\nx") == 417)
  }
}

@Suite struct URLCodingTests {
  @Test func decodesPercentEscapesOnce() {
    #expect(URLCoding.percentDecode("a%2Fb%252F") == "a/b%2F")
    #expect(URLCoding.percentDecode("%E6%97%A5") == "日")
    #expect(URLCoding.percentDecode("a+b") == "a+b")
    #expect(URLCoding.percentDecode("a+b", plusIsSpace: true) == "a b")
    #expect(URLCoding.percentDecode("%zz") == nil)
    #expect(URLCoding.percentDecode("%4") == nil)
    #expect(URLCoding.percentDecode("%FF") == nil)
  }

  @Test func queryLastParameterWinsAndPlusIsSpace() throws {
    let query = try QueryParameters("prefix=a+b%2Bc&x=1&x=2&flag")
    #expect(query["prefix"] == "a b+c")
    #expect(query["x"] == "2")
    #expect(query["flag"] == "")
    #expect(throws: HTTPParseError.self) { try QueryParameters("a=%G1") }
  }

  /// The byte-level parser against the cases a per-Character split got right: empty pieces,
  /// `=` inside a value, a name without a value, escapes in names, non-ASCII after decoding.
  @Test func queryEdgeCasesMatchTheFormDecoding() throws {
    let query = try QueryParameters("&&a=1=2&&b&%6E%61me=%E6%97%A5+x&c=&=v&")
    #expect(query["a"] == "1=2")
    #expect(query["b"] == "")
    #expect(query["name"] == "日 x")
    #expect(query["c"] == "")
    #expect(query[""] == "v")
    #expect(query["missing"] == nil)
    #expect(query.values.count == 5)
    #expect(try QueryParameters("")["a"] == nil)
    #expect(QueryParameters(["k": "v"])["k"] == "v")
  }

  /// A malformed escape or one that decodes to bytes that are not UTF-8, in a name or a value,
  /// is a 400 naming the parameter, not a crash or a silently repaired string.
  @Test func queryMalformedEscapesAreRefusedWithTheirName() {
    for raw in ["a=%", "a=%4", "a=%FF", "%C3=1", "ok=1&bad%=2", "x=%e6%97"] {
      #expect(throws: HTTPParseError.self, "\(raw)") { try QueryParameters(Substring(raw)) }
    }
    do {
      _ = try QueryParameters("ok=1&bad%zz=2")
      Issue.record("a malformed escape was accepted")
    } catch {
      #expect(error.status == 400)
      #expect(error.message.contains("'bad%zz'"))
    }
  }

  @Test func encodesWholeNamesAsOneSegment() {
    #expect(URLCoding.encodeComponent("dir/my file+x&y;z~é.txt") == "dir%2Fmy%20file%2Bx%26y%3Bz~%C3%A9.txt")
  }
}

@Suite struct HTTPResponseTests {
  @Test func encodesHeadAndBodyWithContentLength() {
    let response = HTTPResponse(status: 200, headers: ["content-type": "text/plain"], body: Array("hi".utf8))
    #expect(
      String(decoding: response.encoded(), as: UTF8.self)
        == "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nhi")
    #expect(
      String(decoding: response.encoded(includeBody: false, close: true), as: UTF8.self)
        == "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: close\r\n\r\n")
  }

  @Test func testRefusesResponseSplittingThroughHeaderValues() {
    let response = HTTPResponse(status: 200, headers: ["x-goog-meta-a": "v\r\nSet-Cookie: evil"])
    let text = String(decoding: response.encoded(), as: UTF8.self)
    #expect(text.contains("x-goog-meta-a: v  Set-Cookie: evil\r\n"))
    #expect(!text.contains("\r\nSet-Cookie"))
  }

  @Test func noBodyOn204And304() {
    let text = String(decoding: HTTPResponse(status: 204, body: [1, 2]).encoded(), as: UTF8.self)
    #expect(text == "HTTP/1.1 204 No Content\r\n\r\n")
  }
}
