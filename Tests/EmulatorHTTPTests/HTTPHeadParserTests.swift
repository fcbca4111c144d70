import Testing

@testable import EmulatorHTTP

/// `HTTPHeadParser` from bytes: the request line split at its first two spaces, the limits judged
/// before any field is parsed, the Host count; without a decoder or a socket.
@Suite struct HTTPHeadParserTests {
  private func parse(_ text: String, limits: HTTPLimits = HTTPLimits()) -> Result<HTTPRequestHead, HTTPParseError> {
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBufferPointer { buffer -> Result<HTTPRequestHead, HTTPParseError> in
      do throws(HTTPParseError) {
        return .success(try HTTPHeadParser.decodeHead(buffer, limits: limits))
      } catch {
        return .failure(error)
      }
    }
  }

  private func status(_ text: String, limits: HTTPLimits = HTTPLimits()) -> Int? {
    if case .failure(let error) = parse(text, limits: limits) { return error.status }
    return nil
  }

  @Test func splitsTheRequestLineAndKeepsEveryFieldInOrder() throws {
    let head = try parse("PATCH /b/x/o/a%20b?y=1 HTTP/1.1\r\nHost: h:1\r\nX-A: 1\r\nx-a:  2 \r\nContent-Type: t").get()
    #expect(head.method == "PATCH")
    #expect(head.target == "/b/x/o/a%20b?y=1")
    #expect(head.version == .http11)
    #expect(head.headers.fields.map(\.name) == ["host", "x-a", "x-a", "content-type"])
    #expect(head.headers.values("x-a") == ["1", "2"])
    #expect(head.headers["content-type"] == "t")
  }

  @Test(arguments: [
    "GET  / HTTP/1.1", " GET / HTTP/1.1", "GET /", "GET", "", "GET / HTTP/1.1 extra", "GET / ", "GET / HTTP/1",
    "GET / HTTP/1.1x", "GET / http/1.1", "GE(T / HTTP/1.1", "GET /a\u{7f} HTTP/1.1", "GET a HTTP/1.1",
  ])
  func testRefusesMalformedRequestLines(line: String) {
    #expect(status(line + "\r\nHost: h") == 400)
  }

  @Test func testRefusesVersionsOtherThanOne() throws {
    #expect(status("GET / HTTP/2.0\r\nHost: h") == 505)
    #expect(try parse("GET / HTTP/1.0").get().version == .http10)
    #expect(try parse("GET / HTTP/1.7\r\nHost: h").get().version == .http11)
  }

  @Test func testRefusesOneFieldOverTheCountAndAcceptsTheCountItself() {
    var limits = HTTPLimits()
    limits.maxHeaderCount = 4
    let fields = (1...3).map { "X-\($0): v\r\n" }.joined()
    #expect(status("GET / HTTP/1.1\r\n" + fields + "Host: h", limits: limits) == nil)
    #expect(status("GET / HTTP/1.1\r\n" + fields + "X-4: v\r\nHost: h", limits: limits) == 431)
    // The count is judged before a field is parsed: a malformed fifth field is still a 431.
    #expect(status("GET / HTTP/1.1\r\n" + fields + "bad line\r\nHost: h", limits: limits) == 431)
  }

  @Test func testRefusesALongRequestLineBeforeItsFields() {
    var limits = HTTPLimits()
    limits.maxRequestLineBytes = 20
    #expect(status("GET /" + String(repeating: "a", count: 16) + " HTTP/1.1\r\nbad line", limits: limits) == 414)
  }

  @Test func testRefusesBareCRAndBareLFInsideLines() {
    #expect(status("GET / HTTP/1.1\r\nHost: h\rX: y") == 400)
    #expect(status("GET / HTTP/1.1\r\nHost: h\nX: y") == 400)
    #expect(status("GET /\r HTTP/1.1\r\nHost: h") == 400)
  }

  /// Line ends are found CR by CR: a CR that no LF follows (just before a line end, at the very
  /// end of the head) is no line end and is refused inside the line it is in.
  @Test func aCRThatIsNoLineEndIsRefusedWhereverItIs() throws {
    #expect(status("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\r\nY: b") == 400)
    #expect(status("GET / HTTP/1.1\r\nHost: h\r") == 400)
    #expect(status("GET / HTTP/1.1\r\r\nHost: h") == 400)
    let head = try parse("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2").get()
    #expect(head.headers.fields.map(\.name) == ["host", "a", "b"])
    #expect(head.headers.fields.map(\.value) == ["h", "1", "2"])
  }

  @Test func countsHostFieldsWhateverTheirCase() {
    #expect(status("GET / HTTP/1.1\r\nhost: a\r\nHOST: b") == 400)
    #expect(status("GET / HTTP/1.1\r\nX: y") == 400)
    #expect(status("GET / HTTP/1.0\r\nX: y") == nil)
  }
}
