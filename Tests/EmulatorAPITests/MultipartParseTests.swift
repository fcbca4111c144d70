import Testing

@testable import EmulatorAPI

/// `MultipartRelated.parse` finds each delimiter only at the start of a line: bodies built from
/// random parts (bytes that include LFs, CRs and the delimiter's text in the middle of a line) must
/// come back as exactly the parts they were built from.
@Suite struct MultipartParseTests {
  /// The media type is matched without regard to ASCII case (RFC 2045 §5.1), on its bytes.
  @Test func theMultipartTypeIsMatchedInAnyCase() throws {
    #expect(try MultipartRelated.boundary(from: "multipart/related; boundary=b") == "b")
    #expect(try MultipartRelated.boundary(from: "Multipart/Related; boundary=c") == "c")
    #expect(try MultipartRelated.boundary(from: "MULTIPART/mixed; boundary=d") == "d")
    for refused in ["text/plain; boundary=b", "multipart; boundary=b", "multipar", "", "multipart\\/related; boundary=b"] {
      #expect(throws: APIError.self, "\(refused)") { try MultipartRelated.boundary(from: refused) }
    }
  }

  @Test func randomBodiesSplitIntoTheirParts() throws {
    var generator = SystemRandomNumberGenerator()
    let boundary = "b0und"
    // No CR: a part's trailing CR is taken as its CRLF's (as GCS does); LFs and delimiter text are in.
    let alphabet = Array("-b0und\nx".utf8)
    for round in 0..<300 {
      let lineBreak: [UInt8] = round % 2 == 0 ? [13, 10] : [10]
      var body: [UInt8] = []
      var expected: [[UInt8]] = []
      let partCount = Int.random(in: 1...3, using: &generator)
      for _ in 0..<partCount {
        body += Array("--\(boundary)".utf8) + lineBreak + Array("Content-Type: x/y".utf8) + lineBreak + lineBreak
        // A part's bytes: random, but never a line that starts with the delimiter.
        var part = (0..<Int.random(in: 0...40, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
        while let line = lineStartingWithDelimiter(part, "--\(boundary)") { part.remove(at: line) }
        expected.append(part)
        body += part + lineBreak
      }
      body += Array("--\(boundary)--".utf8) + lineBreak
      let parts = try MultipartRelated.parse(body, boundary: boundary)
      #expect(parts.map { Array(body[$0.range]) } == expected, "round \(round): \(String(decoding: body, as: UTF8.self))")
      #expect(parts.allSatisfy { $0.headers["content-type"] == "x/y" })
    }
  }

  /// Where a line of `bytes` starts with `delimiter` (at the start or after a LF), if one does.
  func lineStartingWithDelimiter(_ bytes: [UInt8], _ delimiter: String) -> Int? {
    let needle = Array(delimiter.utf8)
    for start in bytes.indices where start == 0 || bytes[start - 1] == 10 {
      if bytes[start...].starts(with: needle) { return start }
      // A prefix of the delimiter at the very end would complete with the next delimiter line.
      if needle.starts(with: bytes[start...]) { return start }
    }
    return nil
  }

  @Test func aDelimiterInsideALineIsPartOfTheBytes() throws {
    let body = Array("--b\r\n\r\nx--b y\r\n--b\r\n\r\nz\r\n--b--".utf8)
    let parts = try MultipartRelated.parse(body, boundary: "b")
    #expect(parts.map { String(decoding: body[$0.range], as: UTF8.self) } == ["x--b y", "z"])
  }

  /// Part header names are matched without case and both sides lose the spaces and tabs around
  /// them; the value keeps its case, and a line without a colon is skipped.
  @Test func partHeadersAreTrimmedAndNamesLowerCased() throws {
    let body = Array(
      "--b\r\nCONTENT-Type :\t Application/JSON; Charset=UTF-8 \t\r\nno colon here\r\nX-Empty:\r\n\r\n{}\r\n--b--".utf8)
    let parts = try MultipartRelated.parse(body, boundary: "b")
    #expect(parts.count == 1)
    #expect(parts.first?.headers == ["content-type": "Application/JSON; Charset=UTF-8", "x-empty": ""])
  }
}
