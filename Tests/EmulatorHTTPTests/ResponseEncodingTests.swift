import Testing

@testable import EmulatorHTTP

/// What the connection writes: a response encoded into a reused buffer, its numbers, and the
/// buffers one loop's connections share.
@Suite struct ResponseEncodingTests {
  @Test(arguments: [0, 7, 10, 99, 100, 65536, 1 << 40, Int.max])
  func writesDecimalNumbers(value: Int) {
    var out: [UInt8] = []
    HTTPResponse.appendDecimal(value, to: &out)
    #expect(String(decoding: out, as: UTF8.self) == String(value))
  }

  @Test func encodesIntoABufferAfterWhatItHolds() {
    var out = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
    let response = HTTPResponse(status: 404, headers: ["a": "b"], body: Array("no".utf8))
    response.encode(into: &out, close: true)
    let expected =
      "HTTP/1.1 100 Continue\r\n\r\n"
      + "HTTP/1.1 404 Not Found\r\na: b\r\ncontent-length: 2\r\nconnection: close\r\n\r\nno"
    #expect(String(decoding: out, as: UTF8.self) == expected)
  }

  @Test func namesUnknownStatusesAndKeepsAHandlersContentLength() {
    let response = HTTPResponse(status: 299, headers: ["content-length": "5"], body: [])
    let text = String(decoding: response.encoded(includeBody: false), as: UTF8.self)
    #expect(text == "HTTP/1.1 299 Status 299\r\ncontent-length: 5\r\n\r\n")
  }

  @Test func headerInjectionThroughAStoredValueIsBlanked() {
    let response = HTTPResponse(
      status: 200, headers: ["x-goog-meta-a": "one\r\nset-cookie: x=1\u{0}\u{7F}\tend"], body: [])
    let text = String(decoding: response.encoded(), as: UTF8.self)
    #expect(text == "HTTP/1.1 200 OK\r\nx-goog-meta-a: one  set-cookie: x=1  \tend\r\ncontent-length: 0\r\n\r\n")
  }

  /// The head is sized before it is written: many long fields, a streamed body's framing and
  /// `Connection: close` all fit, byte for byte, and a handler's own `Connection` is dropped.
  @Test func aHeadOfManyLongFieldsIsWrittenWhole() {
    var headers = HTTPHeaders()
    var expected = "HTTP/1.1 201 Created\r\n"
    for index in 0..<40 {
      let value = String(repeating: Character(String(index % 10)), count: 1000 + index)
      headers.add("x-field-\(index)", value)
      expected += "x-field-\(index): \(value)\r\n"
    }
    headers.add("connection", "keep-alive")
    let body = [UInt8](repeating: 65, count: 3)
    let response = HTTPResponse(status: 201, headers: headers, body: body)
    var out: [UInt8] = []
    response.encode(into: &out, close: true)
    expected += "content-length: 3\r\nconnection: close\r\n\r\nAAA"
    #expect(String(decoding: out, as: UTF8.self) == expected)
  }

  @Test func aLoopLendsItsEmptiedBufferToTheNextResponse() {
    let buffers = LoopBuffers()
    var first = buffers.take()
    first.append(contentsOf: [UInt8](repeating: 1, count: 3000))
    let capacity = first.capacity
    buffers.give(&first)
    #expect(first.isEmpty && first.capacity == 0, "the writer keeps nothing")
    let second = buffers.take()
    #expect(second.isEmpty)
    #expect(second.capacity == capacity, "the capacity comes back")
    #expect(buffers.take().capacity == 0, "a buffer is lent to one response at a time")
  }

  @Test func aLoopDoesNotKeepALargeBody() {
    let buffers = LoopBuffers()
    var large = [UInt8](repeating: 0, count: LoopBuffers.keptCapacity + 1)
    buffers.give(&large)
    #expect(buffers.take().capacity == 0)
  }
}
