import Testing

@testable import EmulatorHTTP

private func parse(_ header: String) -> Result<HeaderParameters, HeaderParameterError> {
  do throws(HeaderParameterError) {
    return .success(try HeaderParameters(parsing: header))
  } catch {
    return .failure(error)
  }
}

private func boundary(_ header: String) -> Result<String, HeaderParameterError> {
  do throws(HeaderParameterError) {
    return .success(try HeaderParameters(parsing: header).multipartBoundary())
  } catch {
    return .failure(error)
  }
}

private func failure<T>(_ result: Result<T, HeaderParameterError>) -> String? {
  if case .failure(let error) = result { return error.message }
  return nil
}

/// The one parser for headers with parameters (RFC 9110 §5.6.6, RFC 2045 §5.1, RFC 2046 §5.1.1),
/// from strings, with the exact shapes real clients write.
@Suite struct HeaderParametersTests {
  @Test func pythonEmailPackageQuotedBoundary() throws {
    // google-resumable-media / google-api-python-client (Python's email package).
    let header = try HeaderParameters(parsing: #"multipart/related; boundary="===============7989999651140513039==""#)
    #expect(header.value == "multipart/related")
    #expect(header["boundary"] == "===============7989999651140513039==")
    #expect(try header.multipartBoundary() == "===============7989999651140513039==")
  }

  @Test func apitoolsReprBoundaryKeepsItsSingleQuotes() throws {
    // apitools (gcloud) writes `boundary=%r`: single quotes are boundary characters to RFC 2046;
    // the multipart parser, not this one, recognises the client's quirk.
    #expect(
      try boundary("multipart/related; boundary='===============5738263679778929715=='").get()
        == "'===============5738263679778929715=='")
  }

  @Test func goMimeMultipartHexBoundary() throws {
    let hex = String(repeating: "0123456789abcdef", count: 4).prefix(60)
    #expect(try boundary("multipart/related; boundary=\(hex)").get() == String(hex))
  }

  @Test func googleCloudCppJavaAndNodeBoundaries() throws {
    let cpp = "Ae3kP9qZx7LmN2vB8cD4fG6hJ1kL5mN0pQ3rS7tU9vW2xY4zA6bC8dE0fG2hI4jK"
    #expect(try boundary("multipart/related; boundary=\(cpp)").get() == cpp)
    let java = "__END_OF_PART__3f1c7a52-8a0e-4f4e-9d59-2b1d6f0c8e11__"
    #expect(try boundary("multipart/related; boundary=\(java)").get() == java)
    let node = "b6a1f3e2-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
    #expect(try boundary("multipart/related; boundary=\(node)").get() == node)
  }

  @Test func namesAreCaseInsensitiveWhitespaceAndOrderFreeUnknownIgnored() throws {
    let header = try HeaderParameters(
      parsing: "Multipart/Related ;charset=UTF-8 ;  BOUNDARY = \"b 1\" ; type=\"application/json\";;")
    #expect(header.matches("multipart/related"))
    #expect(header["boundary"] == "b 1")
    #expect(header["charset"] == "UTF-8")
    #expect(header["type"] == "application/json")
    #expect(header.parameters.count == 3)
  }

  @Test func backslashEscapesInQuotedStrings() throws {
    let header = try HeaderParameters(
      parsing: #"attachment; filename="a \"quoted\" name\\.txt"; filename*=UTF-8''a%20b.txt"#)
    #expect(header.value == "attachment")
    #expect(header["filename"] == #"a "quoted" name\.txt"#)
    #expect(header["filename*"] == "UTF-8''a%20b.txt")
  }

  @Test func aValueWithoutParameters() throws {
    let header = try HeaderParameters(parsing: "  text/plain  ")
    #expect(header.value == "text/plain")
    #expect(header.parameters.isEmpty)
  }

  @Test func unterminatedQuoteIsAnError() {
    #expect(failure(parse(#"multipart/related; boundary="abc"#))?.contains("no closing quote") == true)
    #expect(failure(parse(#"multipart/related; boundary="abc\"#))?.contains("no closing quote") == true)
  }

  @Test func emptyBoundaryIsAnError() {
    #expect(failure(boundary(#"multipart/related; boundary="""#)) == "The multipart boundary is empty.")
    #expect(failure(boundary("multipart/related; boundary=")) == "The multipart boundary is empty.")
  }

  @Test func boundaryOver70CharactersIsAnError() {
    let long = String(repeating: "a", count: 71)
    #expect(failure(boundary("multipart/related; boundary=\(long)"))?.contains("71 characters") == true)
    #expect((try? boundary("multipart/related; boundary=\(String(repeating: "a", count: 70))").get()) != nil)
  }

  @Test func boundaryOutsideRFC2046CharactersIsAnError() {
    #expect(failure(boundary("multipart/related; boundary=abc*def"))?.contains("'*'") == true)
    #expect(failure(boundary(#"multipart/related; boundary="ends in space ""#))?.contains("ends with a space") == true)
  }

  @Test func missingBoundaryIsAnError() {
    #expect(failure(boundary("multipart/related; charset=utf-8"))?.contains("no boundary") == true)
  }

  @Test func smugglingAttemptWithTwoBoundariesIsRefused() {
    #expect(failure(parse("multipart/related; boundary=a; Boundary=b"))?.contains("given twice") == true)
  }

  @Test func malformedParametersSayWhatIsWrong() {
    #expect(failure(parse("multipart/related; boundary"))?.contains("no '='") == true)
    #expect(failure(parse(#"multipart/related; boundary="a" junk"#))?.contains("after the value") == true)
    #expect(failure(parse("multipart/related; =x"))?.contains("parameter name is expected") == true)
    #expect(failure(parse("multipart/related; boundary=a\"b"))?.contains("outside quotes") == true)
    #expect(failure(parse("multipart/related; boundary=\"a\u{1}b\""))?.contains("control character") == true)
  }

  /// Parameters written the way a careful client writes them (quoted when needed, `"` and `\`
  /// escaped) parse back to themselves; hostile bytes only ever give a value or an error.
  @Test func randomParametersRoundTripAndRandomBytesNeverCrash() throws {
    var generator = SplitMix(seed: 21)
    let alphabet = Array("abcXYZ019=/ ;\"\\'()+_,-.:?\t\u{7f}\u{1}é".unicodeScalars)
    for _ in 0..<2000 {
      var expected: [(String, String)] = []
      var header = "multipart/related"
      for index in 0..<Int(generator.next() % 4) {
        let name = "p\(index)"
        let value = String(
          String.UnicodeScalarView(
            (0..<Int(generator.next() % 12)).map { _ in
              alphabet[Int(generator.next() % UInt64(alphabet.count))]
            }
          ).filter { $0.value >= 32 && $0.value != 127 })
        let quoted = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        header += (generator.next() % 2 == 0 ? "; " : " ;") + name + "=\"" + quoted + "\""
        expected.append((name, value))
      }
      let parsed = try HeaderParameters(parsing: header)
      #expect(parsed.parameters.elementsEqual(expected) { $0 == $1 }, "\(header)")
      let noise = String(
        String.UnicodeScalarView(
          (0..<Int(generator.next() % 40)).map { _ in
            alphabet[Int(generator.next() % UInt64(alphabet.count))]
          }))
      _ = try? HeaderParameters(parsing: "text/plain;" + noise)
    }
  }

  /// Header lookups lower-case a name only when it has an ASCII capital: every byte value is
  /// classed right, and a name differing only in case finds the same field.
  @Test func onlyASCIICapitalsCountAsUpperCase() {
    for byte in 0...255 {
      let text = "ab" + String(decoding: [UInt8(byte)], as: UTF8.self) + "cd"
      #expect(text.hasASCIIUppercase == (65...90).contains(byte), "byte \(byte)")
    }
    #expect(!"Étude".dropFirst().description.hasASCIIUppercase)
    var headers = HTTPHeaders()
    headers.add("X-Goog-Upload-Protocol", "raw")
    #expect(headers["x-goog-upload-protocol"] == "raw")
    #expect(headers["X-GOOG-UPLOAD-PROTOCOL"] == "raw")
  }

  /// The shortcut a header check takes: a value it calls plain must parse, and one with a
  /// control character or a parameter is never plain (random values, every byte below 128).
  @Test func aPlainValueAlwaysParsesAndNoOtherIsPlain() {
    var generator = SplitMix(seed: 9)
    for _ in 0..<20_000 {
      let bytes = (0..<Int(generator.next() % 24)).map { _ in UInt8(generator.next() % 128) }
      let value = String(decoding: bytes, as: UTF8.self)
      let plain = HeaderParameters.isPlainValue(value)
      #expect(plain == !bytes.contains { $0 == UInt8(ascii: ";") || $0 < 32 || $0 == 127 }, "\(bytes)")
      if plain { #expect((try? HeaderParameters(parsing: value)) != nil, "\(bytes)") }
    }
    #expect(HeaderParameters.isPlainValue("application/octet-stream"))
    #expect(!HeaderParameters.isPlainValue("text/plain\u{1}"))
    #expect(!HeaderParameters.isPlainValue("text/plain; charset=utf-8"))
  }
}

/// A small deterministic generator (SplitMix64), so a failure repeats.
private struct SplitMix {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

@Suite struct HeaderLookupTests {
  @Test func lookupsIgnoreCaseAndFindTheFirstField() {
    var headers = HTTPHeaders()
    headers.add("Content-Type", "text/plain")
    headers.add("X-Goog-Meta-A", "1")
    headers.add("x-goog-meta-a", "2")
    #expect(headers["content-type"] == "text/plain")
    #expect(headers["Content-Type"] == "text/plain")
    #expect(headers["CONTENT-TYPE"] == "text/plain")
    #expect(headers["x-goog-meta-a"] == "1")
    #expect(headers["X-GOOG-META-A"] == "1")
    #expect(headers.values("X-Goog-Meta-A") == ["1", "2"])
    #expect(headers["content-typ"] == nil)
    #expect(headers["content-typf"] == nil)
    headers.set("X-GOOG-META-A", "3")
    #expect(headers.values("x-goog-meta-a") == ["3"])
    headers.remove("Content-TYPE")
    #expect(headers["content-type"] == nil)
    // Only ASCII letters fold: a name added with other letters is found as it was spelled.
    headers.add("X-Caf\u{C9}", "4")
    #expect(headers["x-caf\u{C9}"] == "4")
    #expect(headers["X-CAF\u{C9}"] == "4")
    #expect(headers["x-caf\u{E9}"] == nil)
  }

  /// Names are bytes: a canonically equivalent spelling (é precomposed, or e and a combining
  /// accent) is another name, for header names and query parameters alike.
  @Test func namesAreComparedByTheirBytes() throws {
    #expect("caf\u{E9}".sameUTF8("caf\u{E9}"))
    #expect(!"caf\u{E9}".sameUTF8("cafe\u{301}"))
    let query = try QueryParameters("caf%C3%A9=1&cafe%CC%81=2")
    #expect(query["caf\u{E9}"] == "1")
    #expect(query["cafe\u{301}"] == "2")
    #expect(query["cafe"] == nil)
  }
}
