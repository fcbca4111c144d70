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
    #expect(try boundary("multipart/related; boundary='===============5738263679778929715=='").get()
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
    let header = try HeaderParameters(parsing: "Multipart/Related ;charset=UTF-8 ;  BOUNDARY = \"b 1\" ; type=\"application/json\";;")
    #expect(header.matches("multipart/related"))
    #expect(header["boundary"] == "b 1")
    #expect(header["charset"] == "UTF-8")
    #expect(header["type"] == "application/json")
    #expect(header.parameters.count == 3)
  }

  @Test func backslashEscapesInQuotedStrings() throws {
    let header = try HeaderParameters(parsing: #"attachment; filename="a \"quoted\" name\\.txt"; filename*=UTF-8''a%20b.txt"#)
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
}
